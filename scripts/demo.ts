/**
 * Demo: send the files in examples/ to a running ledger and print each URL
 * and verdict (`npm run demo`).
 *
 *   AER1_SERVER  base URL of the server (default http://localhost:3000)
 *   AER1_KEY     an API key with role producer or admin (else LEDGER_ADMIN_KEY)
 *   AER1_EXAMPLES  the examples directory (default: found next to this script)
 *
 * What it shows:
 *  1. receipts (core, transport, a transport provider failure) and the
 *     draft's Section 8 workflow example are recorded as received;
 *  2. the eight-entry timeline is imported as job `job-eight`; verified
 *     without a commitment, truncation is not excluded (S7.3);
 *  3. the witness's endpoint commitment is recorded: it binds, and the
 *     ledger's own endpoint for the closed job is the same;
 *  4. the six-entry rebuilt truncation (its entries say job `job-eight`, so
 *     it cannot be a second `job-eight` in the same ledger) is checked
 *     locally with the same core: the chain alone verifies, the commitment
 *     catches it (commitment_entry_count_mismatch, commitment_final_digest_mismatch);
 *  5. a -06 timeline is imported and labeled historical.
 * Running it again answers 200 for what is already recorded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkCommitment, ReasonCode, verifyTimeline } from '../src/core/aer1';

const SERVER = (process.env.AER1_SERVER ?? 'http://localhost:3000').replace(/\/+$/, '');
const KEY = process.env.AER1_KEY ?? process.env.LEDGER_ADMIN_KEY;

function examplesDir(): string {
  if (process.env.AER1_EXAMPLES) return resolve(process.env.AER1_EXAMPLES);
  // scripts/demo.ts (ts) or dist/scripts/demo.js (built)
  for (const up of ['..', '../..']) {
    const d = resolve(__dirname, up, 'examples');
    if (existsSync(join(d, 'timeline-eight.json'))) return d;
  }
  throw new Error('examples/ not found: set AER1_EXAMPLES');
}

const DIR = examplesDir();
const text = (name: string): string => readFileSync(join(DIR, name), 'utf8');

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

let failures = 0;

async function call(method: string, path: string, body?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (KEY && method !== 'GET') headers.Authorization = `Bearer ${KEY}`;
  const res = await fetch(`${SERVER}${path}`, { method, headers, body });
  let parsed: Record<string, unknown> = {};
  try {
    parsed = (await res.json()) as Record<string, unknown>;
  } catch {
    parsed = {};
  }
  return { status: res.status, body: parsed };
}

function show(label: string, a: Answer, expect: number[], extra: Record<string, unknown> = {}): void {
  const ok = expect.includes(a.status);
  if (!ok) failures++;
  const b = a.body;
  const fields: Record<string, unknown> = {};
  for (const k of ['assessment', 'url', 'verify_url', 'verdict', 'error', 'message', 'reasons']) if (b[k] !== undefined) fields[k] = b[k];
  Object.assign(fields, extra);
  process.stdout.write(`${ok ? 'ok ' : 'UNEXPECTED'} ${a.status} ${label}\n`);
  for (const [k, v] of Object.entries(fields)) process.stdout.write(`      ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
}

async function main(): Promise<void> {
  process.stdout.write(`AER-1 ledger demo against ${SERVER} (examples from ${DIR})\n\n`);
  if (!KEY) process.stdout.write('warning: no AER1_KEY or LEDGER_ADMIN_KEY: writes will be refused (401)\n\n');

  process.stdout.write('# Receipts (S3/S4), stored as received\n');
  for (const f of ['receipt-core.json', 'receipt-transport.json', 'receipt-transport-provider-failure.json']) {
    show(`POST /api/receipts  ${f}`, await call('POST', '/api/receipts', text(f)), [200, 201]);
  }

  process.stdout.write('\n# Workflow receipt: the draft Section 8 example (its step receipts are not at hand)\n');
  const wf = await call('POST', '/api/workflows', text('workflow-draft-example.json'));
  show('POST /api/workflows  workflow-draft-example.json', wf, [200, 201, 422]);

  process.stdout.write('\n# Timeline of job-eight (S7), imported complete\n');
  show('PUT /api/jobs/job-eight/timeline  timeline-eight.json', await call('PUT', '/api/jobs/job-eight/timeline', text('timeline-eight.json')), [200, 201]);
  const before = await call('GET', '/api/jobs/job-eight/verify');
  // 422 truncation_not_excluded the first time (no commitment yet); 200 clean when the demo runs again.
  show('GET /api/jobs/job-eight/verify', before, [200, 422], {
    commitment: (before.body.commitment as { status?: string } | undefined)?.status,
    truncation_excluded: before.body.truncation_excluded,
    statement: before.body.statement,
  });

  process.stdout.write('\n# Endpoint commitment published by the witness (rev 09)\n');
  const commitmentText = text('commitment-eight.json');
  const c = await call('POST', '/api/jobs/job-eight/commitments', commitmentText);
  show('POST /api/jobs/job-eight/commitments  commitment-eight.json', c, [200, 201], { binding: c.body.binding, witness: c.body.witness });
  const after = await call('GET', '/api/jobs/job-eight/verify');
  show('GET /api/jobs/job-eight/verify', after, [200], {
    commitment: (after.body.commitment as { status?: string } | undefined)?.status,
    truncation_excluded: after.body.truncation_excluded,
    statement: after.body.statement,
  });
  const ep = await call('GET', '/api/jobs/job-eight/endpoint');
  show('GET /api/jobs/job-eight/endpoint  (the ledger\'s own endpoint, for a witness to publish)', ep, [200], ep.body);
  const commitment = JSON.parse(commitmentText) as Record<string, unknown>;
  const same = ep.body.final_entry_digest === commitment.final_entry_digest && ep.body.entry_count === commitment.entry_count && ep.body.job_id === commitment.job_id;
  if (!same) failures++;
  process.stdout.write(`      ${same ? 'matches' : 'DOES NOT MATCH'} the witness's commitment\n`);

  process.stdout.write('\n# The rebuilt six-entry truncation, checked locally with the same core\n');
  process.stdout.write('  (its entries say job_id job-eight: presented in place of the eight-entry timeline)\n');
  const six = verifyTimeline(JSON.parse(text('timeline-truncated-six.json')));
  process.stdout.write(`      chain alone: verdict ${six.verdict}, ${six.entry_count} entries, closed ${six.closed}: the chain check cannot see the truncation (S7.3)\n`);
  const caught = checkCommitment(six, commitment);
  const expected: ReasonCode[] = ['commitment_entry_count_mismatch', 'commitment_final_digest_mismatch'];
  const catches = !caught.binding && expected.every((r) => caught.reasons.includes(r));
  if (!catches) failures++;
  process.stdout.write(`${catches ? 'ok ' : 'UNEXPECTED'} against commitment-eight.json: binding ${caught.binding}, reasons ${caught.reasons.join(', ')}\n`);

  process.stdout.write('\n# A -06 timeline (S7.4): stored, labeled historical, never valid\n');
  const h = await call('PUT', '/api/jobs/job-old/timeline', text('timeline-historical-06.json'));
  show('PUT /api/jobs/job-old/timeline  timeline-historical-06.json', h, [200, 201], { label: h.body.label });
  show('GET /api/jobs/job-old/verify', await call('GET', '/api/jobs/job-old/verify'), [422]);

  process.stdout.write(failures === 0 ? '\nall steps answered as expected\n' : `\n${failures} step(s) answered unexpectedly\n`);
  process.exitCode = failures === 0 ? 0 : 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`demo: ${e instanceof Error ? e.message : String(e)} (is the server running at ${SERVER}?)\n`);
  process.exitCode = 1;
});
