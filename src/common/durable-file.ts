/**
 * Replacing a small file so that a crash (SIGKILL, power loss) leaves either
 * the old text or the new one, never a mix: a temporary file in the same
 * folder (mode 0600, exclusive create), fsynced, renamed over the file, then
 * the folder fsynced so the rename itself is on disk. Resolves only once all
 * of that is done; on an error the temporary file is removed and the error
 * propagates (the old file is untouched). Used by the witness's state and the
 * checkpoint signer's state.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Write `text` (UTF-8) to `path` durably and atomically; see the module comment. */
export async function writeFileDurably(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(text, 'utf8');
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
  const dh = await open(dirname(path), 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
