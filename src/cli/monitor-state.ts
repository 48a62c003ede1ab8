/**
 * The monitor's state file: the last checkpoint it accepted, a signed note
 * saved atomically (temp file, fsync, rename, folder fsync) and checked with
 * the log key when read back.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Checkpoint, NoteVerifier, verifyCheckpoint } from '../core/tlog';
import { CliError, errorText } from './io';

/**
 * Write `text` to `file` atomically: a temporary file beside it, written
 * and fsynced, renamed over `file`, then the directory fsynced.
 */
export function saveAtomically(file: string, text: string): void {
  const dir = dirname(resolve(file));
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fd: number | null = null;
  try {
    fd = openSync(tmp, 'wx', 0o644);
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(tmp, file);
  } catch (e) {
    if (fd !== null) closeSync(fd);
    rmSync(tmp, { force: true });
    throw new CliError(`cannot save the checkpoint to ${file}: ${errorText(e)}`);
  }
  try {
    const d = openSync(dir, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  } catch {
    // some file systems cannot fsync a directory; the rename is done
  }
}

/** The saved checkpoint (null: none yet). Throws CliError (exit 2) for a state file that is unreadable or does not verify. */
export function readState(file: string, log: NoteVerifier): { note: string; cp: Checkpoint } | null {
  let note: string;
  try {
    note = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(`cannot read the state file ${file}: ${errorText(e)}`);
  }
  try {
    return { note, cp: verifyCheckpoint(note, [log], log.name).checkpoint };
  } catch (e) {
    throw new CliError(`the checkpoint saved in ${file} does not verify with --vkey (${errorText(e)}); the file or the key changed. Not touching it: move it away to start over (trust on first use)`);
  }
}
