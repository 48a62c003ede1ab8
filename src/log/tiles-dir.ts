/**
 * The static copy of the log's read path (C2SP tlog-tiles; docs/tiles.md):
 * a folder any web server, object store or CDN can serve as is, holding
 * `checkpoint`, `tile/<L>/<N>[.p/<W>]`, `tile/entries/<N>[.p/<W>]`, and
 * `leaf/<N>` for public leaves too large for a bundle.
 *
 * Each file is written atomically (a temporary file in the same folder,
 * fsynced, renamed over the name, the folders fsynced): a reader sees the
 * old bytes or the new, never a mix. A full tile or bundle that exists is
 * never written again (its bytes cannot change); partial ones are written
 * for each new checkpoint, and the checkpoint last, so every tile a
 * checkpoint names is in place before the checkpoint is.
 */
import { replaceFile } from '../common/durable-file';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encodeTileIndex, parseCheckpoint, parseNote, TILE_WIDTH, TileRef, tilePath, tilesBetween } from '../core/tlog';
import { storedLeaf } from '../core/ledger/event-hash';
import { Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { TileReads } from './tile-reads';
import type { StoredCheckpoint } from './tree.repository';

/** What one {@link TilesDir.write} did. */
export interface TilesWriteReport {
  /** Tree size of the checkpoint now in the folder. */
  size: number;
  /** Files written (tiles, bundles, large leaves and the checkpoint). */
  files: number;
  /** Bytes written. */
  bytes: number;
  /** Full tiles or bundles already present, left as they were. */
  kept: number;
}

/** The path of a public leaf too large for a bundle, below the prefix: `leaf/<N>` (N as a tile index path). */
export function largeLeafPath(index: number): string {
  return `leaf/${encodeTileIndex(index)}`;
}

/** Writes a {@link TilesDir}'s files (see the module comment). */
export class TilesDir {
  private readonly reads: TileReads;
  /** The checkpoint note last written by this writer (null: read the folder's). */
  private lastNote: string | null = null;
  private readonly dirs = new Set<string>();

  constructor(
    readonly root: string,
    private readonly events: EventsRepository,
  ) {
    this.reads = new TileReads(events);
  }

  /**
   * The checkpoint in the folder (size 0 when none or unreadable: everything
   * is written again, full tiles kept). Throws when it is another log's
   * (another origin), or another tree at the size of `cp`.
   */
  private async folderSize(cp: StoredCheckpoint): Promise<number> {
    let text: string;
    try {
      text = await readFile(join(this.root, 'checkpoint'), 'utf8');
    } catch {
      return 0;
    }
    let theirs: { origin: string; size: number; root: string };
    let mine: { origin: string; size: number; root: string };
    try {
      const t = parseCheckpoint(parseNote(text).text);
      const m = parseCheckpoint(parseNote(cp.note).text);
      theirs = { origin: t.origin, size: t.size, root: t.rootHash.toString('base64') };
      mine = { origin: m.origin, size: m.size, root: m.rootHash.toString('base64') };
    } catch {
      return 0;
    }
    if (theirs.origin !== mine.origin) throw new Error(`the folder holds a checkpoint of another log (origin ${theirs.origin}, not ${mine.origin}): not written into`);
    if (theirs.size === mine.size && theirs.root !== mine.root) throw new Error(`the folder holds another tree of size ${theirs.size} (root ${theirs.root}, not ${mine.root}): not written into`);
    return theirs.size;
  }

  /**
   * Bring the folder to checkpoint `cp` (the one `GET /checkpoint` serves):
   * the tiles and bundles new since the folder's checkpoint, then `cp`'s
   * note. Nothing is written when the folder already holds that note. A
   * checkpoint smaller than the folder's is refused (the copy never goes back).
   */
  async write(q: Queryable, cp: StoredCheckpoint): Promise<TilesWriteReport> {
    const report: TilesWriteReport = { size: cp.size, files: 0, bytes: 0, kept: 0 };
    if (this.lastNote === cp.note) return report;
    const from = await this.folderSize(cp);
    if (cp.size < from) throw new Error(`the folder holds a checkpoint of size ${from}, larger than ${cp.size}: not written back`);
    for (const t of tilesBetween(from, cp.size)) {
      const file = join(this.root, tilePath(t));
      if (t.width === TILE_WIDTH && (await exists(file))) {
        report.kept++;
        continue;
      }
      let bytes: Buffer;
      if (t.level === 'entries') {
        const b = await this.reads.bundle(q, t);
        bytes = b.bytes;
        for (const e of b.emptied) if (e.why === 'too_large') await this.writeLargeLeaf(q, t.index * TILE_WIDTH + e.index, report);
      } else bytes = await this.reads.hashTile(q, t);
      await this.put(file, bytes);
      report.files++;
      report.bytes += bytes.length;
    }
    await this.syncDirs();
    await this.put(join(this.root, 'checkpoint'), Buffer.from(cp.note, 'utf8'));
    await this.syncDirs();
    report.files++;
    report.bytes += Buffer.byteLength(cp.note);
    this.lastNote = cp.note;
    return report;
  }

  private async writeLargeLeaf(q: Queryable, index: number, report: TilesWriteReport): Promise<void> {
    const file = join(this.root, largeLeafPath(index));
    if (await exists(file)) return;
    const [e] = await this.events.page(q, index, index + 1, 1);
    const leaf = e ? storedLeaf(e).leaf : null;
    if (!leaf) return; // the bundle was checked against the tree just before: not reached
    await this.put(file, leaf);
    report.files++;
    report.bytes += leaf.length;
  }

  /** Write `bytes` to `file` atomically (temporary file, fsync, rename); its folder is fsynced by {@link syncDirs}. */
  private async put(file: string, bytes: Uint8Array): Promise<void> {
    const dir = dirname(file);
    await mkdir(dir, { recursive: true });
    await replaceFile(file, bytes, { mode: 0o644, syncFolder: false });
    this.dirs.add(dir);
  }

  /** fsync every folder a rename went into since the last call (some file systems cannot: ignored). */
  private async syncDirs(): Promise<void> {
    for (const d of this.dirs) {
      try {
        const dh = await open(d, 'r');
        try {
          await dh.sync();
        } finally {
          await dh.close();
        }
      } catch {
        // the rename is done; a folder that cannot be fsynced is left to the file system
      }
    }
    this.dirs.clear();
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

/** The tile refs a folder written for `size` holds (for tests and the bench). */
export function tilesOfSize(size: number): TileRef[] {
  return tilesBetween(0, size);
}
