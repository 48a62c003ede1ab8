/**
 * Hostile input: property-based fuzzing (fast-check, bounded runs and time)
 * of every write endpoint with malformed JSON, wrong types, huge strings and
 * arrays, deep nesting, invalid UTF-8, NUL bytes, prototype-pollution keys
 * and odd identifiers. Every answer must be below 500, an error must be a
 * JSON body with a reason code and no internals, a refused request must leave
 * the ledger (and the key table) exactly as it was, and Object.prototype must
 * stay clean.
 */
import * as fc from 'fast-check';
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { call, freshReceipt, leaksInternals, listen, makeEntry, vector, waitUntil } from './helpers';

const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 20_000);

type Json = unknown;
type Path = (string | number)[];

/** What a fuzz case does to the endpoint's valid request. */
type Mutation =
  | { k: 'text'; s: string }
  | { k: 'json'; v: Json }
  | { k: 'bytes'; b: Uint8Array }
  | { k: 'truncate'; at: number }
  | { k: 'retype'; at: number; v: Json }
  | { k: 'drop'; at: number }
  | { k: 'huge-string'; at: number; size: number; ch: string }
  | { k: 'huge-array'; at: number; size: number; item: string; top: boolean }
  | { k: 'deep'; at: number; depth: number; open: string; top: boolean }
  | { k: 'bad-utf8'; at: number; seq: number[] }
  | { k: 'nul'; at: number; escaped: boolean }
  | { k: 'pollute'; at: number; key: '__proto__' | 'constructor' | 'prototype' }
  | { k: 'ident'; s: string };

interface Endpoint {
  name: string;
  method: 'POST' | 'PUT';
  role: 'producer' | 'compliance' | 'auditor' | 'admin';
  contentType?: string;
  /** A valid request; `ident` (when given) is used as the path parameter and the matching body fields. */
  build(ident?: string): { path: string; text: string };
}

/** A path segment for `s`: percent-encoded, or raw invalid escapes when `s` is not well-formed Unicode. */
function seg(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80' + encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''));
  }
}

function paths(v: Json, prefix: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push([...prefix, i]);
      paths(x, [...prefix, i], out);
    });
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push([...prefix, k]);
      paths(x, [...prefix, k], out);
    }
  }
  return out;
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function setAt(doc: Json, path: Path, value: Json): Json {
  if (path.length === 0) return value;
  const root = clone(doc);
  let node = root as Record<string | number, Json>;
  for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, Json>;
  Object.defineProperty(node, path[path.length - 1], { value, enumerable: true, writable: true, configurable: true });
  return root;
}

function dropAt(doc: Json, path: Path): Json {
  const root = clone(doc);
  let node = root as Record<string | number, Json>;
  for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, Json>;
  if (Array.isArray(node)) node.splice(path[path.length - 1] as number, 1);
  else delete node[path[path.length - 1]];
  return root;
}

const PLACEHOLDER = '__fuzz_placeholder_7f3a__';

/** `doc` as JSON text with the member at `at` replaced by `raw` text (or the whole body when there is no member). */
function spliceRaw(doc: Json, at: number, raw: string, top: boolean): string {
  const ps = paths(doc);
  if (top || ps.length === 0) return raw;
  return JSON.stringify(setAt(doc, ps[at % ps.length], PLACEHOLDER)).replace(`"${PLACEHOLDER}"`, raw);
}

/** Apply a mutation to a valid JSON document's text. */
function mutateDoc(text: string, m: Mutation): Buffer {
  const doc = JSON.parse(text) as Json;
  const ps = paths(doc);
  const pick = (at: number): Path => (ps.length ? ps[at % ps.length] : []);
  switch (m.k) {
    case 'text':
      return Buffer.from(m.s, 'utf8');
    case 'json':
      return Buffer.from(JSON.stringify(m.v) ?? 'null', 'utf8');
    case 'bytes':
      return Buffer.from(m.b);
    case 'truncate':
      return Buffer.from(text.slice(0, Math.floor((text.length * m.at) / 1000)), 'utf8');
    case 'retype':
      return Buffer.from(JSON.stringify(setAt(doc, pick(m.at), m.v)), 'utf8');
    case 'drop':
      return Buffer.from(JSON.stringify(ps.length ? dropAt(doc, pick(m.at)) : doc), 'utf8');
    case 'huge-string': {
      const strings = ps.filter((p) => typeof p.reduce<Json>((n, k) => (n as Record<string | number, Json>)[k], doc) === 'string');
      const target = strings.length ? strings[m.at % strings.length] : pick(m.at);
      return Buffer.from(JSON.stringify(setAt(doc, target, m.ch.repeat(m.size))), 'utf8');
    }
    case 'huge-array':
      return Buffer.from(spliceRaw(doc, m.at, `[${Array.from({ length: m.size }, () => m.item).join(',')}]`, m.top), 'utf8');
    case 'deep': {
      const close = m.open === '[' ? ']' : '}';
      return Buffer.from(spliceRaw(doc, m.at, `${m.open.repeat(m.depth)}${m.open === '[' ? '' : '1'}${close.repeat(m.depth)}`, m.top), 'utf8');
    }
    case 'bad-utf8': {
      const bytes = Buffer.from(text, 'utf8');
      // Into a string value when there is one: right after a quote.
      const quotes: number[] = [];
      bytes.forEach((b, i) => b === 0x22 && quotes.push(i + 1));
      const pos = quotes.length ? quotes[m.at % quotes.length] : m.at % (bytes.length + 1);
      return Buffer.concat([bytes.subarray(0, pos), Buffer.from(m.seq), bytes.subarray(pos)]);
    }
    case 'nul': {
      if (!m.escaped) {
        const bytes = Buffer.from(text, 'utf8');
        const pos = m.at % (bytes.length + 1);
        return Buffer.concat([bytes.subarray(0, pos), Buffer.from([0]), bytes.subarray(pos)]);
      }
      const strings = ps.filter((p) => typeof p.reduce<Json>((n, k) => (n as Record<string | number, Json>)[k], doc) === 'string');
      if (!strings.length) return Buffer.from(text, 'utf8');
      const target = strings[m.at % strings.length];
      const old = target.reduce<Json>((n, k) => (n as Record<string | number, Json>)[k], doc) as string;
      return Buffer.from(JSON.stringify(setAt(doc, target, `${old.slice(0, 3)}\u0000${old.slice(3)}`)), 'utf8');
    }
    case 'pollute': {
      const payload = JSON.parse(
        m.key === '__proto__' ? '{"polluted":"yes","toString":"x","isAdmin":true}' : m.key === 'constructor' ? '{"prototype":{"polluted":"yes"}}' : '{"polluted":"yes"}',
      ) as Json;
      // Into the document itself or into one of its objects.
      const objects: Path[] = [[], ...ps.filter((p) => {
        const v = p.reduce<Json>((n, k) => (n as Record<string | number, Json>)[k], doc);
        return v !== null && typeof v === 'object' && !Array.isArray(v);
      })];
      const target = objects[m.at % objects.length];
      if (doc === null || typeof doc !== 'object') return Buffer.from(text, 'utf8');
      const root = clone(doc);
      const node = target.reduce<Json>((n, k) => (n as Record<string | number, Json>)[k], root);
      if (node === null || typeof node !== 'object' || Array.isArray(node)) return Buffer.from(text, 'utf8');
      Object.defineProperty(node, m.key, { value: payload, enumerable: true, writable: true, configurable: true });
      return Buffer.from(JSON.stringify(root), 'utf8');
    }
    case 'ident':
      return Buffer.from(text, 'utf8');
  }
}

const BAD_UTF8 = [
  [0xc3, 0x28], // invalid continuation
  [0xc0, 0x80], // overlong NUL
  [0xed, 0xa0, 0x80], // UTF-16 surrogate
  [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
  [0xff],
  [0xe2, 0x82], // truncated
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

/** CJK text is three UTF-8 bytes a character and does not compress: over PostgreSQL's 2704-byte index entry limit, under the URL limit. */
const longCjk = (min: number, max: number): fc.Arbitrary<string> => fc.string({ unit: fc.integer({ min: 0x4e00, max: 0x9fff }).map((c) => String.fromCharCode(c)), minLength: min, maxLength: max });

const identArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  longCjk(1000, 1400),
  fc.constantFrom('\u0000', 'job\u0000x', 'a'.repeat(6000), '..', '../../etc/passwd', '%00', ' ', '\ud800x', 'x\udfff', '__proto__', 'constructor', "'; DROP TABLE events; --", '\u202e\u0000\uffff'),
);

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ k: fc.constant('text' as const), s: fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('{', '[', '{"a":', '"', 'nul', 'tru', '1e99999', '{"a":1,}', '[1 2]', '\ufeff{}', '{}{}', '//', '  ')) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('json' as const), v: fc.jsonValue({ maxDepth: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('bytes' as const), b: fc.uint8Array({ minLength: 1, maxLength: 80 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('truncate' as const), at: fc.integer({ min: 0, max: 999 }) }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('retype' as const), at: fc.nat(), v: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, true, -1, 1.5, 1e308, '', [], {}, '9'.repeat(400), [[[]]])) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('drop' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('huge-string' as const), at: fc.nat(), size: fc.integer({ min: 50_000, max: 160_000 }), ch: fc.constantFrom('x', '\u0000', 'é', '\ud800', '"', '\\', '\u{1f600}') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('huge-array' as const), at: fc.nat(), size: fc.integer({ min: 1000, max: 120_000 }), item: fc.constantFrom('0', '{}', '"x"', '[]', 'null', '{"kind":"receipt","id":"x"}'), top: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('deep' as const), at: fc.nat(), depth: fc.oneof(fc.integer({ min: 50, max: 3000 }), fc.integer({ min: 10_000, max: 150_000 })), open: fc.constantFrom('[', '{"a":', '{"__proto__":'), top: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('bad-utf8' as const), at: fc.nat(), seq: fc.constantFrom(...BAD_UTF8) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('nul' as const), at: fc.nat(), escaped: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('pollute' as const), at: fc.nat(), key: fc.constantFrom('__proto__' as const, 'constructor' as const, 'prototype' as const) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('ident' as const), s: identArb }) },
);

/** A short description of a case for failure messages (never the whole body). */
function describeCase(m: Mutation, path: string, body: Buffer): string {
  const short = JSON.stringify(m, (_k, v: unknown) => (typeof v === 'string' && v.length > 80 ? `${v.slice(0, 80)}…(${v.length})` : v instanceof Uint8Array ? `bytes(${v.length})` : v));
  return `${short} → ${path.slice(0, 120)} body ${body.length} bytes: ${JSON.stringify(body.subarray(0, 160).toString('latin1'))}`;
}

describe.each(DIALECTS)('hostile input on %s', (dialect) => {
  jest.setTimeout(300_000);
  let t: TestApp;
  let base: string;
  let receiptId: string;
  let planId: string;
  const JOB = 'job-fuzz-fixture';
  const stats: Record<string, Record<number, number>> = {};
  const protoNames = Object.getOwnPropertyNames(Object.prototype).sort().join(',');

  beforeAll(async () => {
    t = await startApp(dialect, { VERIFY_RATE_LIMIT: '100000' });
    base = await listen(t.app);
    const r = freshReceipt();
    expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: r.text })).status).toBe(201);
    receiptId = r.id;
    expect((await call(base, 'POST', `/api/jobs/${JOB}/entries`, { key: t.keys.producer, body: JSON.stringify(makeEntry(JOB, 1, ZERO_DIGEST)) })).status).toBe(201);
    const plan = await call(base, 'POST', '/api/plans', { key: t.keys.compliance, body: JSON.stringify({ job_id: 'job-fuzz-plan', title: 'fuzz', expected_actions: [{ action_id: 'a', tool: 'fetch_page' }] }) });
    expect(plan.status).toBe(201);
    planId = plan.body.plan_id;
  });
  afterAll(async () => {
    await t?.close();
    process.stdout.write(`hostile input on ${dialect}: status counts per endpoint ${JSON.stringify(stats)}\n`);
  });

  const workflow = (vector('workflow-valid-3') as { workflow: Record<string, unknown> }).workflow;
  const timelineOf = (job: string): Record<string, unknown>[] => {
    const a = makeEntry(job, 1, ZERO_DIGEST);
    return [a, makeEntry(job, 2, entryDigest(a)!, { close: true })];
  };
  const withTool = (text: string, tool?: string): string => (tool === undefined ? text : JSON.stringify({ ...JSON.parse(text), tool: { name: tool, version: '1' } }));

  const ENDPOINTS: Endpoint[] = [
    { name: 'POST /api/receipts', method: 'POST', role: 'producer', build: (s) => ({ path: '/api/receipts', text: withTool(freshReceipt().text, s) }) },
    {
      name: 'POST /api/receipts/batch',
      method: 'POST',
      role: 'producer',
      contentType: 'application/x-ndjson',
      build: (s) => ({ path: '/api/receipts/batch', text: [freshReceipt().text, withTool(freshReceipt().text, s), freshReceipt().text].join('\n') }),
    },
    { name: 'POST /api/receipts/:id/corrections', method: 'POST', role: 'producer', build: (s) => ({ path: `/api/receipts/${s === undefined ? receiptId : seg(s)}/corrections`, text: withTool(freshReceipt().text, s) }) },
    {
      name: 'POST /api/jobs/:job/entries',
      method: 'POST',
      role: 'producer',
      build: (s) => {
        const job = s ?? `job-fuzz-${Math.random().toString(36).slice(2)}`;
        return { path: `/api/jobs/${seg(job)}/entries`, text: JSON.stringify({ ...makeEntry(job, 1, ZERO_DIGEST), ...(s === undefined ? {} : { tool: s }) }) };
      },
    },
    {
      name: 'PUT /api/jobs/:job/timeline',
      method: 'PUT',
      role: 'producer',
      build: (s) => {
        const job = s ?? `job-fuzz-${Math.random().toString(36).slice(2)}`;
        return { path: `/api/jobs/${seg(job)}/timeline`, text: JSON.stringify(timelineOf(job)) };
      },
    },
    {
      name: 'POST /api/jobs/:job/commitments',
      method: 'POST',
      role: 'producer',
      build: (s) => {
        const job = s ?? JOB;
        return { path: `/api/jobs/${seg(job)}/commitments`, text: JSON.stringify({ job_id: job, final_entry_digest: 'a'.repeat(64), entry_count: 1, published_at: '2026-10-02T08:00:00Z', witness: s ?? 'w' }) };
      },
    },
    { name: 'POST /api/workflows', method: 'POST', role: 'producer', build: (s) => ({ path: '/api/workflows', text: JSON.stringify(s === undefined ? workflow : { ...workflow, goal: s, session_id: s }) }) },
    {
      name: 'POST /api/workflows/assemble',
      method: 'POST',
      role: 'producer',
      build: (s) => ({ path: '/api/workflows/assemble', text: JSON.stringify({ session_id: s ?? 'sess', goal: s ?? 'goal', status: 'ok', receipt_ids: [receiptId], output: s ?? 'out' }) }),
    },
    {
      name: 'POST /api/plans',
      method: 'POST',
      role: 'compliance',
      build: (s) => ({ path: '/api/plans', text: JSON.stringify({ job_id: s ?? `job-plan-${Math.random().toString(36).slice(2)}`, title: s ?? 'plan', unplanned: 'flag', expected_actions: [{ action_id: 'a', tool: s ?? 'fetch_page', min_count: 1, after: [] }] }) }),
    },
    {
      name: 'POST /api/plans/:id/amendments',
      method: 'POST',
      role: 'compliance',
      build: (s) => ({ path: `/api/plans/${s === undefined ? planId : seg(s)}/amendments`, text: JSON.stringify({ title: s ?? 'amended', reason: s ?? 'why', expected_actions: [{ action_id: 'a', tool: s ?? 'fetch_page' }] }) }),
    },
    { name: 'POST /api/coverage-reports', method: 'POST', role: 'auditor', build: (s) => ({ path: '/api/coverage-reports', text: JSON.stringify({ job_id: s ?? 'job-fuzz-plan' }) }) },
    {
      name: 'POST /api/verification-batches',
      method: 'POST',
      role: 'auditor',
      build: (s) => ({ path: '/api/verification-batches', text: JSON.stringify({ targets: [{ kind: 'receipt', id: s ?? receiptId }, { kind: 'job', id: s ?? JOB }, { kind: 'workflow', id: s ?? receiptId }] }) }),
    },
    { name: 'POST /api/keys', method: 'POST', role: 'admin', build: (s) => ({ path: '/api/keys', text: JSON.stringify({ name: s ?? 'fuzz-key', role: 'auditor' }) }) },
  ];

  async function state(): Promise<string> {
    const head = await t.app.get(LedgerService).head();
    const keys = await t.app.get(DatabaseService).query<{ n: number | string }>('SELECT COUNT(*) AS n FROM api_keys');
    return JSON.stringify({ head, keys: Number(keys[0].n) });
  }

  /** Let in-process verification batches started by an accepted request finish, so they cannot move the head later. */
  async function quiet(): Promise<void> {
    const open = () => t.app.get(DatabaseService).query<{ batch_id: string; total: number; done: number }>('SELECT batch_id, total, done FROM verification_batches WHERE completed_at IS NULL');
    try {
      await waitUntil('verification batches to complete', 15_000, async () => (await open()).length === 0, 50);
    } catch (e) {
      const stuck = await open();
      const requests = await t.app.get(DatabaseService).query<{ data: string }>("SELECT data FROM events WHERE type = 'VerificationBatchRequested' AND stream_id = ?", [`batch:${stuck[0]?.batch_id}`]);
      throw new Error(`${(e as Error).message}: ${JSON.stringify(stuck)} ${requests[0]?.data.slice(0, 600)}`);
    }
  }

  /** Send one case; returns the problems found (empty when the answer is acceptable). */
  async function probe(ep: Endpoint, m: Mutation): Promise<string[]> {
    const valid = ep.build(m.k === 'ident' ? m.s : undefined);
    let body: Buffer;
    if (ep.contentType === 'application/x-ndjson' && m.k !== 'ident') {
      // Mutate the middle line of the NDJSON body; the others stay valid.
      const lines = valid.text.split('\n');
      lines[1] = mutateDoc(lines[1], m).toString('latin1');
      body = Buffer.from(lines.join('\n'), 'latin1');
    } else body = m.k === 'ident' ? Buffer.from(valid.text, 'utf8') : mutateDoc(valid.text, m);
    const before = await state();
    const r = await call(base, ep.method, valid.path, { key: t.keys[ep.role], body, contentType: ep.contentType ?? 'application/json', timeoutMs: 60_000 });
    (stats[ep.name] ??= {})[r.status] = ((stats[ep.name] ??= {})[r.status] ?? 0) + 1;
    const problems: string[] = [];
    if (r.status >= 500) problems.push(`status ${r.status}: ${r.text.slice(0, 300)}`);
    if (r.status >= 400) {
      if (!/^application\/json/.test(r.headers.get('content-type') ?? '')) problems.push(`error without a JSON content type: ${r.headers.get('content-type')}`);
      if (typeof r.body?.error !== 'string' || !/^[a-z][a-z0-9_]*$/.test(r.body.error)) problems.push(`no reason code: ${r.text.slice(0, 200)}`);
      if (typeof r.body?.message !== 'string') problems.push(`no message: ${r.text.slice(0, 200)}`);
      const leak = leaksInternals(r.text);
      if (leak) problems.push(`error body shows a ${leak}: ${r.text.slice(0, 300)}`);
      const after = await state();
      if (after !== before) problems.push(`a refused request changed the ledger: ${before} → ${after}`);
    } else await quiet();
    if (Object.getOwnPropertyNames(Object.prototype).sort().join(',') !== protoNames) problems.push('Object.prototype gained properties');
    const probeObj = {} as Record<string, unknown>;
    if (probeObj.polluted !== undefined || probeObj.isAdmin !== undefined) problems.push('Object.prototype is polluted');
    return problems.map((p) => `${p}\n    case: ${describeCase(m, valid.path, body)}`);
  }

  it.each([
    'POST /api/receipts',
    'POST /api/receipts/batch',
    'POST /api/receipts/:id/corrections',
    'POST /api/jobs/:job/entries',
    'PUT /api/jobs/:job/timeline',
    'POST /api/jobs/:job/commitments',
    'POST /api/workflows',
    'POST /api/workflows/assemble',
    'POST /api/plans',
    'POST /api/plans/:id/amendments',
    'POST /api/coverage-reports',
    'POST /api/verification-batches',
    'POST /api/keys',
  ])('%s: never 5xx, always a JSON reason code, nothing written on refusal', async (name) => {
    const ep = ENDPOINTS.find((e) => e.name === name)!;
    // The valid request itself is accepted (so the fuzz starts from the accepting path).
    const ok = ep.build();
    const first = await call(base, ep.method, ok.path, { key: t.keys[ep.role], body: ok.text, contentType: ep.contentType ?? 'application/json' });
    expect(first.status).toBeLessThan(300);
    await quiet();
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(mutationArb, async (m) => {
        const problems = await probe(ep, m);
        if (problems.length) failures.push(...problems);
        return problems.length === 0;
      }),
      { numRuns: NUM_RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, endOnFailure: true, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
    ).catch((e: unknown) => {
      throw new Error(`${failures.slice(0, 3).join('\n') || String(e)}\n${String(e).split('\n').slice(0, 3).join('\n')}`);
    });
    // Every one of the fixed hostile identifiers, too.
    for (const s of ['\u0000', 'job\u0000x', '\ud800x', 'a'.repeat(6000), '__proto__']) {
      const problems = await probe(ep, { k: 'ident', s });
      expect(problems).toEqual([]);
    }
    expect(await call(base, 'GET', '/api/ledger/verify').then((r) => r.body.ok)).toBe(true);
  });
});
