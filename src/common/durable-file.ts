/**
 * Replacing a small file so that a crash (SIGKILL, power loss) leaves either
 * the old text or the new one, never a mix: a temporary file in the same
 * folder (mode 0600, exclusive create), fsynced, renamed over the file, then
 * the folder fsynced so the rename itself is on disk. Resolves only once all
 * of that is done; on an error the temporary file is removed and the error
 * propagates (the old file is untouched). Used by the witness's state and the
 * checkpoint signer's state, and (without the folder fsync, done once per
 * batch) the static tile copy.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Write `text` (UTF-8) to `path` durably and atomically; see the module comment. */
export async function writeFileDurably(path: string, text: string): Promise<void> {
  await replaceFile(path, Buffer.from(text, 'utf8'), { mode: 0o600, syncFolder: true });
}

/**
 * Replace `path` with `bytes` atomically: a temporary file beside it
 * (exclusive create, `mode`), fsynced, renamed over `path`; the folder is
 * fsynced too unless `syncFolder` is false (a caller writing many files into
 * one folder fsyncs it once, after them: the static tile copy).
 */
export async function replaceFile(path: string, bytes: Uint8Array, opts: { mode: number; syncFolder: boolean }): Promise<void> {
  const tmp = `${dirname(path)}/.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', opts.mode);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  if (!opts.syncFolder) return;
  const dh = await open(dirname(path), 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
