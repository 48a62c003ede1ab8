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
 * The close of a job whose session ended while some of its receipts wait
 * here is spooled too, after them (delivered as `POST /api/jobs/{id}/close`;
 * a job closed already, or with no timeline, counts as delivered).
 *
 * Lines: `{"add":{"job":J,"receipt":R}}`, `{"close":{"job":J,"id":ID}}`, `{"done":ID}`, `{"refused":ID,"reason":TEXT}`.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { GatewayReceipt } from './receipt';
import { LedgerClient, LedgerRefusedError } from './ledger-client';

/** A receipt to record and append, or the close of a job (`close`: its id in the file). */
type Spooled = { job: string; receipt: GatewayReceipt } | { job: string; close: string };

const idOf = (x: Spooled): string => ('receipt' in x ? x.receipt.id : x.close);

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
      let v: { add?: { job: string; receipt: GatewayReceipt }; close?: { job: string; id: string }; done?: string; refused?: string };
      try {
        v = JSON.parse(line) as typeof v;
      } catch {
        continue; // a line torn by a crash before its fsync: never acknowledged
      }
      if (v.add) adds.push(v.add);
      else if (v.close) adds.push({ job: v.close.job, close: v.close.id });
      else if (typeof v.done === 'string') finished.add(v.done);
      else if (typeof v.refused === 'string') {
        finished.add(v.refused);
        this.refusals++;
      }
    }
    this.pending.push(...adds.filter((a) => !finished.has(idOf(a))));
  }

  /** Append one line (`null`: only the line end) and fsync it. */
  private writeLine(v: unknown): void {
    writeSync(this.fd, v === null ? '\n' : JSON.stringify(v) + '\n');
    fsyncSync(this.fd);
  }

  /** Receipts (and closes) not yet delivered. */
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

  /** Keep the close of `job` on disk (fsynced), after its receipts waiting here, until delivered. */
  addClose(job: string): void {
    const id = randomUUID();
    this.writeLine({ close: { job, id } });
    this.pending.push({ job, close: id });
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
      const next = this.pending[0];
      const { job } = next;
      try {
        if ('receipt' in next) {
          await this.ledger.recordReceipt(next.receipt, JSON.stringify(next.receipt));
          await this.ledger.append(job, next.receipt, true);
        } else await this.ledger.close(job);
        this.writeLine({ done: idOf(next) });
      } catch (err) {
        if (!(err instanceof LedgerRefusedError)) return; // down: try again later
        this.writeLine({ refused: idOf(next), reason: err.message });
        this.refusals++;
        const what = 'receipt' in next ? `spooled receipt ${next.receipt.id} (job ${JSON.stringify(job)}) was refused by the ledger and stays only in ${this.path}` : `the spooled close of job ${JSON.stringify(job)} was refused by the ledger`;
        this.warn(`aer1 gateway: ${what}: ${err.message}`);
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
