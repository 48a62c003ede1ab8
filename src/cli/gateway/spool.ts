/**
 * `--on-ledger-down queue`: receipts the ledger could not take, kept in a
 * local append-only file (one JSON line each, fsynced before the agent is
 * answered) and delivered, in order, when the ledger answers again, also
 * after a restart of the gateway. A delivered receipt gets a `done` line;
 * delivery is idempotent by receipt id (the receipt POST answers 200 for
 * the same bytes, and the timeline is searched for the id before an
 * append), so a crash between delivering and writing `done` records
 * nothing twice.
 *
 * Lines: `{"add":{"job":J,"receipt":R}}`, `{"done":ID}`, `{"refused":ID,"reason":TEXT}`.
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { GatewayReceipt } from './receipt';
import { LedgerClient, LedgerRefusedError } from './ledger-client';

interface Spooled {
  job: string;
  receipt: GatewayReceipt;
}

export class Spool {
  private readonly pending: Spooled[] = [];
  private readonly fd: number;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Receipts in the file the ledger refused (the file is then never emptied). */
  private refusals = 0;

  /** Open (or create) the spool at `path` and load what was not delivered. */
  constructor(
    readonly path: string,
    private readonly ledger: LedgerClient,
    private readonly warn: (line: string) => void,
  ) {
    const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
    this.load(text);
    this.fd = openSync(path, 'a', 0o600);
    // A line torn by a crash: end it, so the next line does not continue it.
    if (text !== '' && !text.endsWith('\n')) this.writeLine(null);
  }

  private load(text: string): void {
    const finished = new Set<string>();
    const adds: Spooled[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let v: { add?: Spooled; done?: string; refused?: string };
      try {
        v = JSON.parse(line) as typeof v;
      } catch {
        continue; // a line torn by a crash before its fsync: never acknowledged
      }
      if (v.add) adds.push(v.add);
      else if (typeof v.done === 'string') finished.add(v.done);
      else if (typeof v.refused === 'string') {
        finished.add(v.refused);
        this.refusals++;
      }
    }
    this.pending.push(...adds.filter((a) => !finished.has(a.receipt.id)));
  }

  /** Append one line (`null`: only the line end) and fsync it. */
  private writeLine(v: unknown): void {
    writeSync(this.fd, v === null ? '\n' : JSON.stringify(v) + '\n');
    fsyncSync(this.fd);
  }

  /** Receipts not yet delivered. */
  get size(): number {
    return this.pending.length;
  }

  /** True when a receipt of `job` waits: later calls of the job wait behind it, so the timeline keeps call order. */
  holds(job: string): boolean {
    return this.pending.some((p) => p.job === job);
  }

  /** Keep `receipt` of `job` on disk (fsynced) until delivered. */
  add(job: string, receipt: GatewayReceipt): void {
    this.writeLine({ add: { job, receipt } });
    this.pending.push({ job, receipt });
    void this.flush();
  }

  /** Try to deliver every waiting receipt in order; stops at the first that cannot reach the ledger. */
  flush(): Promise<void> {
    this.flushing ??= this.deliver().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async deliver(): Promise<void> {
    while (this.pending.length > 0) {
      const { job, receipt } = this.pending[0];
      try {
        await this.ledger.recordReceipt(receipt, JSON.stringify(receipt));
        await this.ledger.append(job, receipt, true);
        this.writeLine({ done: receipt.id });
      } catch (err) {
        if (!(err instanceof LedgerRefusedError)) return; // down: try again later
        this.writeLine({ refused: receipt.id, reason: err.message });
        this.refusals++;
        this.warn(`aer1 gateway: spooled receipt ${receipt.id} (job ${JSON.stringify(job)}) was refused by the ledger and stays only in ${this.path}: ${err.message}`);
      }
      this.pending.shift();
    }
    // Everything delivered: start the file afresh, unless it holds a refused receipt (kept for the operator).
    if (this.refusals === 0) {
      ftruncateSync(this.fd, 0);
      fsyncSync(this.fd);
    }
  }

  /** Retry delivery every `ms` milliseconds (the timer does not keep the process alive). */
  start(ms: number): void {
    this.timer = setInterval(() => void this.flush(), ms);
    this.timer.unref();
    void this.flush();
  }

  /** Stop retrying and close the file. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flushing?.catch(() => undefined);
    closeSync(this.fd);
  }
}
