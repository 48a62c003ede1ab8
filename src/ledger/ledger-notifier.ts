import { Injectable } from '@nestjs/common';

/**
 * In-process "the ledger has new events": {@link LedgerService.append}
 * reports the head position after each write transaction that appended
 * commits. Only this process's appends are seen; readers that must also see
 * other processes' appends (the event stream) poll the head as well.
 */
@Injectable()
export class LedgerNotifier {
  private waiters = new Set<() => void>();
  private last = 0;

  /** The highest position this process has seen committed (0 before any). */
  get committedHead(): number {
    return this.last;
  }

  /** Called after a commit that appended up to `position`. */
  committed(position: number): void {
    if (position > this.last) this.last = position;
    const ws = this.waiters;
    this.waiters = new Set();
    for (const w of ws) w();
  }

  /**
   * Resolves at the next commit, after `ms` milliseconds, or when `signal`
   * aborts, whichever comes first (never rejects).
   */
  next(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
