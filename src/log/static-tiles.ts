import { Injectable, Logger, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/configuration';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { LogService } from './log.service';
import { TilesDir, TilesWriteReport } from './tiles-dir';

/**
 * TILES_DIR: the API process keeps the static copy of the log's read path
 * (tiles-dir.ts, docs/tiles.md) up to the checkpoint `GET /checkpoint`
 * serves; the checkpoint signer calls {@link sync} after each run (and so
 * every CHECKPOINT_INTERVAL_MS, which also picks up a checkpoint the
 * witnesses have just cosigned). A failed write is logged and tried again
 * on the next run; the copy never holds a checkpoint whose tiles are missing.
 */
@Injectable()
export class StaticTiles {
  private readonly logger = new Logger('StaticTiles');
  private readonly dir: TilesDir | null;
  private running: Promise<TilesWriteReport | null> | null = null;
  /** The last failure (null after a good run), and the size of the checkpoint last written. */
  lastError: { message: string; at: string } | null = null;
  private writtenSize: number | null = null;

  constructor(
    private readonly db: DatabaseService,
    private readonly log: LogService,
    events: EventsRepository,
    @Optional() config?: ConfigService<AppConfig, true>,
  ) {
    const root = config?.get('TILES_DIR', { infer: true });
    this.dir = root ? new TilesDir(root, events) : null;
  }

  /** The folder, or null when TILES_DIR is unset. */
  get root(): string | null {
    return this.dir?.root ?? null;
  }

  /** What /health shows (null without TILES_DIR): the size of the checkpoint in the folder, and the last failure. */
  health(): { checkpoint_size: number | null; last_error?: { message: string; at: string } } | null {
    if (!this.dir) return null;
    return { checkpoint_size: this.writtenSize, ...(this.lastError ? { last_error: this.lastError } : {}) };
  }

  /** Bring the folder to the served checkpoint (one run at a time; a call during a run shares it). Never throws. */
  sync(): Promise<TilesWriteReport | null> {
    const dir = this.dir;
    if (!dir) return Promise.resolve(null);
    this.running ??= (async () => {
      try {
        const cp = await this.log.latest();
        if (!cp) return null;
        const r = await dir.write(this.db, cp);
        this.lastError = null;
        this.writtenSize = r.size;
        return r;
      } catch (e) {
        // Shown by /health to anyone: the folder is named by its role, not its path.
        this.lastError = { message: (e as Error).message.split(dir.root).join('TILES_DIR'), at: new Date().toISOString() };
        this.logger.error(`the static copy in TILES_DIR was not brought up to date: ${(e as Error).message}`);
        return null;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
}
