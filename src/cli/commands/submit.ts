/**
 * `aer1 batch submit [--server URL] [--key KEY] (--all | --since N | TARGETS.json) [--json] [--no-progress]`
 *
 * Submit a verification batch to a running ledger (POST
 * /api/verification-batches, auditor or admin key), follow it with a
 * progress bar (cli-progress, on stderr) until it completes, then print the
 * summary, counted per outcome as `aer1 verify --batch` does (valid, invalid,
 * historical, incomplete, and not found for targets the ledger does not hold),
 * and every record that is not valid.
 * Defaults: `--server` from AER1_SERVER (else http://localhost:3000), `--key`
 * from AER1_AUDITOR_KEY (not AER1_KEY, which the README uses for a producer key).
 * Exit codes: 0 every record valid; 1 any record invalid, historical,
 * incomplete or not found; 2 usage error, the server refused the request, or
 * it could not be reached.
 */
import { Format, GenericFormatter, Options, Params, SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { CliError, CliIo, errorText, EXIT_NOT_VALID, EXIT_OK, OutputWriter, RunContext } from '../io';

/** Results per outcome, as the server's `counts` (they add up to `done`). */
import type { BatchCounts } from '../../core/batch-counts';
export type { BatchCounts };

interface BatchResult {
  kind: string;
  id: string;
  verdict: string;
  reasons: string[];
}

interface BatchStatus {
  batch_id: string;
  status: 'queued' | 'running' | 'completed';
  total: number;
  done: number;
  invalid: number;
  /** Absent from servers older than this CLI: then counted from the results. */
  counts?: BatchCounts;
  results: BatchResult[];
}

export interface SubmitOptions {
  server: string;
  key: string;
  all?: boolean;
  since?: number;
  json?: boolean;
  progress?: boolean;
  /** Milliseconds between status polls (default 500). */
  pollMs?: number;
  /** Give up after this many seconds (default 3600). */
  timeout?: number;
}

/** Default server when neither --server nor AER1_SERVER is given. */
export const DEFAULT_SERVER = 'http://localhost:3000';

/** A result whose target the ledger does not hold (recorded by the server as verdict invalid, reasons ["not_found"]). */
const isNotFound = (r: BatchResult): boolean => r.verdict === 'invalid' && r.reasons.length === 1 && r.reasons[0] === 'not_found';

/** Count results per outcome into `c` (for servers that do not send `counts`); returns `c`. */
export function countResults(results: BatchResult[], c: BatchCounts = { valid: 0, invalid: 0, historical: 0, incomplete: 0, not_found: 0 }): BatchCounts {
  for (const r of results) {
    if (isNotFound(r)) c.not_found++;
    else if (r.verdict === 'valid' || r.verdict === 'historical' || r.verdict === 'incomplete') c[r.verdict]++;
    else c.invalid++;
  }
  return c;
}

/** The summary line: `batch ID: N records: a valid, b invalid, c historical, d incomplete, e not found`. */
export function summaryLine(id: string, total: number, c: BatchCounts): string {
  return `batch ${id}: ${total} record${total === 1 ? '' : 's'}: ${c.valid} valid, ${c.invalid} invalid, ${c.historical} historical, ${c.incomplete} incomplete, ${c.not_found} not found`;
}

const BAR_FORMAT = 'verifying {bar} {value}/{total} records | {notvalid} not valid';

/**
 * The progress line: the time left only once it can be estimated (cli-progress
 * gives `INF` or `NULL` before two samples with progress, which its time
 * format printed as "NFs left" / "LLs left").
 */
export const progressFormat: GenericFormatter = (options: Options, params: Params, payload: object) => {
  const eta: unknown = params.eta;
  const known = typeof eta === 'number' && Number.isFinite(eta) && params.value > 0 && params.value < params.total;
  return Format.Formatter({ ...options, format: known ? `${BAR_FORMAT} | {eta_formatted} left` : BAR_FORMAT }, params, payload);
};

/** The progress bar (on `stream`, normally stderr). */
export function progressBar(stream: NodeJS.WritableStream): SingleBar {
  return new SingleBar({ stream, format: progressFormat, hideCursor: true, etaBuffer: 20 });
}

async function call(method: string, url: string, key: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new CliError(`cannot reach ${new URL(url).origin}: ${errorText((e as { cause?: unknown }).cause ?? e)}`);
  }
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { message: text.slice(0, 200) };
  }
  return { status: res.status, body: parsed };
}

/** The request body for the chosen scope. */
export function batchRequest(opts: { all?: boolean; since?: number }, targetsFile?: string): unknown {
  const chosen = [opts.all === true, opts.since !== undefined, targetsFile !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw new CliError('give exactly one of --all, --since N, or a targets file');
  if (opts.all) return { scope: 'all' };
  if (opts.since !== undefined) return { scope: { since_position: opts.since } };
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(targetsFile as string, 'utf8'));
  } catch (e) {
    throw new CliError(`cannot read targets from ${targetsFile}: ${errorText(e)}`);
  }
  const targets = Array.isArray(doc) ? doc : (doc as { targets?: unknown })?.targets;
  if (!Array.isArray(targets)) throw new CliError(`${targetsFile} must hold [{"kind","id"}, ...] or {"targets": [...]}`);
  return { targets };
}

/** Submit, follow and summarize one batch; returns the exit code. */
export async function submitBatch(body: unknown, o: SubmitOptions, io: CliIo): Promise<number> {
  const base = o.server.replace(/\/+$/, '');
  try {
    new URL(base);
  } catch {
    throw new CliError(`--server must be a URL such as http://localhost:3000, got ${o.server}`);
  }
  const submitted = await call('POST', `${base}/api/verification-batches`, o.key, body);
  if (submitted.status !== 202) {
    const b = submitted.body;
    throw new CliError(`the server refused the batch (${submitted.status} ${String(b.error ?? '')}): ${String(b.message ?? '')}`);
  }
  const id = String(submitted.body.batch_id);
  const total = Number(submitted.body.total);
  const bar = o.progress === false ? null : progressBar(io.stderr as NodeJS.WritableStream);
  bar?.start(total, 0, { notvalid: 0 });
  const deadline = Date.now() + (o.timeout ?? 3600) * 1000;
  let status: BatchStatus;
  for (;;) {
    const r = await call('GET', `${base}/api/verification-batches/${id}?limit=1`, o.key);
    if (r.status !== 200) throw new CliError(`cannot read batch ${id} (${r.status}): ${String(r.body.message ?? '')}`);
    status = r.body as unknown as BatchStatus;
    bar?.update(status.done, { notvalid: status.counts ? status.done - status.counts.valid : status.invalid });
    if (status.status === 'completed') break;
    if (Date.now() > deadline) {
      bar?.stop();
      throw new CliError(`batch ${id} did not complete in ${o.timeout ?? 3600} s (${status.done}/${status.total} done); follow it at ${base}/api/verification-batches/${id}`, EXIT_NOT_VALID);
    }
    await new Promise((resolve) => setTimeout(resolve, o.pollMs ?? 500));
  }
  bar?.stop();
  // Every record that is not valid, page by page (every page when the server sends no counts).
  const failures: BatchResult[] = [];
  const counted = status.counts === undefined ? countResults([]) : null;
  const needPages = status.counts === undefined || status.counts.valid < status.total;
  for (let offset = 0; needPages && offset < status.total; offset += 1000) {
    const page = await call('GET', `${base}/api/verification-batches/${id}?offset=${offset}&limit=1000`, o.key);
    if (page.status !== 200) throw new CliError(`cannot read batch ${id} (${page.status}): ${String(page.body.message ?? '')}`);
    const results = (page.body as unknown as BatchStatus).results ?? [];
    if (counted) countResults(results, counted);
    for (const r of results) if (r.verdict !== 'valid') failures.push(r);
  }
  const counts = status.counts ?? counted!;
  const out = new OutputWriter(io.stdout);
  try {
    if (o.json) await out.write(`${JSON.stringify({ batch_id: id, status: status.status, total: status.total, done: status.done, counts, invalid: status.invalid, failures })}\n`);
    else {
      await out.write(`${summaryLine(id, status.total, counts)}\n`);
      for (const f of failures) await out.write(`  ${isNotFound(f) ? 'NOT FOUND' : f.verdict.toUpperCase()} ${f.kind} ${f.id}: ${f.reasons.join(', ')}\n`);
      await out.write(`  details: ${base}/api/verification-batches/${id}\n`);
    }
    await out.end();
  } finally {
    out.detach();
  }
  return counts.valid === status.total ? EXIT_OK : EXIT_NOT_VALID;
}

function position(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a ledger position (a whole number)');
  return n;
}

/** Register `batch submit` on `program`. */
export function registerSubmit(program: Command, ctx: RunContext): void {
  const batch = program.command('batch').description('verification batches on a running ledger (queue-driven)');
  batch
    .command('submit')
    .description('submit a verification batch, show its progress, print the summary')
    .argument('[targets]', 'JSON file: [{"kind":"receipt|job|workflow","id":"..."}, ...]')
    .option('--server <url>', `the ledger; default: $AER1_SERVER, else ${DEFAULT_SERVER}`)
    .option('--key <key>', 'an auditor (or admin) API key; default: $AER1_AUDITOR_KEY')
    .option('--all', 'every receipt, timeline and workflow in the ledger')
    .option('--since <position>', 'everything recorded after this ledger position', position)
    .option('--json', 'print the summary as one JSON line')
    .option('--no-progress', 'no progress bar')
    .addHelpText('after', '\nExit codes: 0 every record valid; 1 any record invalid, historical, incomplete or not found; 2 usage error, refused or unreachable.')
    .action(async (targets: string | undefined, opts: { server?: string; key?: string; all?: boolean; since?: number; json?: boolean; progress?: boolean }) => {
      const server = opts.server ?? (process.env.AER1_SERVER || DEFAULT_SERVER);
      const key = opts.key ?? process.env.AER1_AUDITOR_KEY;
      if (!key) throw new CliError('an auditor (or admin) API key is needed: --key KEY or AER1_AUDITOR_KEY');
      ctx.exitCode = await submitBatch(batchRequest(opts, targets), { ...opts, server, key }, ctx.io);
    });
}
