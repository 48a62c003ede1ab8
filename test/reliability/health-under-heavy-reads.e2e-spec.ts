/**
 * /health under a burst of heavy reads (issue 26, "Read budgets"): forty
 * coverage-PDF requests from forty addresses at once. At most
 * HEAVY_READ_CONCURRENCY (4) render at a time and the PDFs are rendered on
 * worker threads (PDF_WORKERS), so the server's event loop stays free:
 * /health, asked again and again while the burst is in flight, answers
 * within the bounds below; every PDF request ends 200 (a PDF that opens) or 429
 * `server_busy`, never 500. The built server runs as a child process
 * (`node dist/src/main.js`) behind a trusted proxy (TRUST_PROXY=loopback),
 * so X-Forwarded-For gives each request its own address.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { pdfTextOf } from '../helpers/pdf-text';
import { adminKey, call, killAll, ServerProcess } from './helpers';

jest.setTimeout(180_000);

/** Expected actions in the plan () and entries in the timeline, one per action. */
const ACTIONS = 500;
const REQUESTS = 40;
/**
 * Bounds for /health while the burst is in flight, measured on the shared
 * 2-core machine (load average 12 to 16 from other jobs). Drawing this
 * report on the event loop took 1.8 to 2.1 s a PDF; with the PDFs drawn there,
 * /health waited 30 s and more (fetch timed out, PDF connections reset).
 * With the worker pool the first /health answered in 0.4 to 2.1 s (it waits
 * behind the burst's forty requests themselves: forty cheap reads alone held
 * it 0.6 s at that load) and the median of all answers during the burst was
 * under 10 ms. The first answer must come before even two PDFs drawn on the
 * loop would end; the median shows the loop is free while PDFs are drawn.
 */
const FIRST_HEALTH_BOUND_MS = 2_000; // under the 2.3 s the issue measured; CI runs alone on the machine
const MEDIAN_HEALTH_BOUND_MS = 250;

function entry(job: string, seq: number, prev: string): Record<string, unknown> {
  const bytes = Buffer.from(JSON.stringify({ step: seq, job }), 'utf8').toString('base64');
  return { seq, job_id: job, id: randomUUID(), tool: `t${seq - 1}`, provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: bytes, prev_digest: prev, ...(seq === ACTIONS ? { close: true } : {}) };
}

describe('/health while forty addresses ask for a coverage PDF at once (HEAVY_READ_CONCURRENCY=4)', () => {
  let dir: string;
  let server: ServerProcess;
  let reportId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-health-'));
    const admin = adminKey();
    server = await ServerProcess.start({ DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}`, LEDGER_ADMIN_KEY: admin, TRUST_PROXY: 'loopback', HEAVY_READ_CONCURRENCY: '4', LOG_LEVEL: 'warn' });
    const key = async (role: string): Promise<string> => {
      const r = await call(server.url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name: `health-${role}`, role }) });
      expect(r.status).toBe(201);
      return r.body.key as string;
    };
    const [producer, compliance, auditor] = [await key('producer'), await key('compliance'), await key('auditor')];
    const job = 'job-health-burst';
    const plan = await call(server.url, 'POST', '/api/plans', {
      key: compliance,
      body: JSON.stringify({ job_id: job, title: 'health burst', expected_actions: Array.from({ length: ACTIONS }, (_, i) => ({ action_id: `step-${i}`, tool: `t${i}` })) }),
    });
    expect(plan.status).toBe(201);
    const entries: Record<string, unknown>[] = [];
    let prev = ZERO_DIGEST;
    for (let seq = 1; seq <= ACTIONS; seq++) {
      const e = entry(job, seq, prev);
      entries.push(e);
      prev = entryDigest(e)!;
    }
    const put = await call(server.url, 'PUT', `/api/jobs/${job}/timeline`, { key: producer, body: JSON.stringify(entries) });
    expect(put.status).toBe(201);
    const issued = await call(server.url, 'POST', '/api/coverage-reports', { key: auditor, body: JSON.stringify({ job_id: job }) });
    expect(issued.status).toBe(201);
    reportId = issued.body.report_id as string;
  });

  afterAll(async () => {
    await server?.stop();
    await killAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('/health answers within the bounds while the burst is in flight; every PDF request is 200 (a PDF that opens) or 429 server_busy', async () => {
    // The sample is taken once a signed checkpoint covers the report: every PDF of the burst then says the same
    // (one drawn before the signer's next run says "not yet proven", a few hundred bytes apart).
    const position = Number(((await (await fetch(`${server.url}/api/coverage-reports/${reportId}`, { headers: { accept: 'application/json' } })).json()) as { position: number }).position);
    for (let i = 0; i < 300 && Number((await (await fetch(`${server.url}/checkpoint`)).text()).split('\n')[1]) < position; i++) await new Promise((r) => setTimeout(r, 100));
    const one = await fetch(`${server.url}/coverage/${reportId}.pdf`, { headers: { 'x-forwarded-for': '198.51.100.250' } });
    expect(one.status).toBe(200);
    const sample = Buffer.from(await one.arrayBuffer());
    const { text, pages } = await pdfTextOf(sample);
    expect(pages).toBeGreaterThan(10);
    expect(text).toContain(`step-${ACTIONS - 1} (tool t${ACTIONS - 1})`);

    let inFlight = REQUESTS;
    const burst = Array.from({ length: REQUESTS }, async (_, i) => {
      try {
        const r = await fetch(`${server.url}/coverage/${reportId}.pdf`, { headers: { 'x-forwarded-for': `198.51.100.${i + 1}` }, signal: AbortSignal.timeout(120_000) });
        const body = Buffer.from(await r.arrayBuffer());
        return { status: r.status, type: r.headers.get('content-type'), body };
      } finally {
        inFlight--;
      }
    });
    // /health, asked again and again while any PDF request is unanswered: each answer timed from its request.
    const health: { ms: number; status: number }[] = [];
    await new Promise((r) => setTimeout(r, 20)); // the burst's requests are on the wire
    while (inFlight > 0) {
      const started = performance.now();
      const h = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(60_000) });
      await h.arrayBuffer();
      health.push({ ms: performance.now() - started, status: h.status });
      await new Promise((r) => setTimeout(r, 25));
    }
    const answers = await Promise.all(burst);
    const worst = Math.max(...health.map((h) => h.ms));
    const sorted = health.map((h) => h.ms).sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    process.stdout.write(`health during the burst: ${health.length} answers, first ${health[0]?.ms.toFixed(0)} ms, median ${median.toFixed(0)} ms, worst ${worst.toFixed(0)} ms; PDFs: ${answers.filter((a) => a.status === 200).length} x 200, ${answers.filter((a) => a.status === 429).length} x 429\n`);
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((h) => h.status === 200)).toBe(true);
    expect(worst).toBeLessThan(FIRST_HEALTH_BOUND_MS);
    expect(median).toBeLessThan(MEDIAN_HEALTH_BOUND_MS);
    expect(health.length).toBeGreaterThan(3); // asked again and again while PDFs were drawn

    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 429);
    expect(ok.length + busy.length).toBe(REQUESTS);
    expect(ok.length).toBeGreaterThanOrEqual(4); // the first HEAVY_READ_CONCURRENCY requests are served
    for (const a of busy) expect(JSON.parse(a.body.toString('utf8')).error).toBe('server_busy');
    for (const a of ok) {
      expect(a.type).toBe('application/pdf');
      // The same report rendered again: the same bytes apart from pdfkit's creation date and document id.
      expect(a.body.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(a.body.subarray(-6).toString('latin1')).toMatch(/%%EOF\s*$/);
      expect(Math.abs(a.body.length - sample.length)).toBeLessThan(64);
    }
    const opened = await pdfTextOf(ok[ok.length - 1].body);
    expect(opened.pages).toBe(pages);
    expect(opened.text).toContain(`step-${ACTIONS - 1} (tool t${ACTIONS - 1})`);
  });
});
