/**
 * Security review of OTLP ingestion (`POST /v1/traces`, `POST /api/jobs/{id}/close`),
 * 2026-12-02: the compiled server as a child process on SQLite, attacked
 * with OTLP/JSON and protobuf requests from two owners' keys. The first
 * group pins the findings fixed here (empty job ids, span ids squatted by
 * another owner, duplicates acknowledged in no job, non-UTF-8 results); the
 * second pins attacks the service resisted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { spanReceiptId } from '../../src/otlp/otlp-spans';
import { adminKey, call, freshReceipt, killAll, leaksInternals, makeEntry, Reply, ServerProcess } from './helpers';
import { hex, span, SpanOpts, request } from './otlp-json';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const pbRoot = require('@opentelemetry/otlp-transformer/build/src/generated/root');
const PbSpan = pbRoot.opentelemetry.proto.trace.v1.Span;
const PbResponse = pbRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

/** Protobuf varint length. */
function varint(n: number): Buffer {
  const o: number[] = [];
  while (n > 127) {
    o.push((n & 127) | 128);
    n >>>= 7;
  }
  o.push(n);
  return Buffer.from(o);
}
const field = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), varint(body.length), body]);
/** An ExportTraceServiceRequest holding one protobuf-encoded span (`spanBytes`). */
const pbRequestOf = (spanBytes: Buffer): Buffer => field(0x0a, field(0x12, field(0x12, spanBytes)));
/** A span as protobuf bytes, with extra raw KeyValue attributes appended (field 9). */
function pbSpanBytes(o: SpanOpts, rawAttrs: Buffer[] = []): Buffer {
  const s = span(o) as { traceId: string; spanId: string };
  const base = Buffer.from(PbSpan.encode({ ...s, traceId: Buffer.from(s.traceId, 'hex'), spanId: Buffer.from(s.spanId, 'hex') }).finish());
  return Buffer.concat([base, ...rawAttrs.map((kv) => field(0x4a, kv))]);
}

describe('OTLP ingestion under attack (server process, SQLite)', () => {
  jest.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-otlp-attack-'));
  let server: ServerProcess;
  let url: string;
  let acme: string; // producer, owner acme
  let evil: string; // producer, owner evil

  const traces = (key: string, body: string | Buffer, contentType = 'application/json', headers: Record<string, string> = {}): Promise<Reply> =>
    call(url, 'POST', '/v1/traces', { key, body, contentType, headers });
  const timeline = (job: string): Promise<Reply> => call(url, 'GET', `/api/jobs/${encodeURIComponent(job)}/timeline`);

  beforeAll(async () => {
    const admin = adminKey();
    server = await ServerProcess.start({ DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}`, LEDGER_ADMIN_KEY: admin, CHECKPOINT_INTERVAL_MS: '200' });
    url = server.url;
    const key = async (name: string, role: string, owner?: string): Promise<string> => {
      const r = await call(url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name, role, ...(owner ? { owner } : {}) }) });
      expect(r.status).toBe(201);
      return r.body.key as string;
    };
    acme = await key('acme-agent', 'producer', 'acme');
    evil = await key('evil-agent', 'producer', 'evil');
  });

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => {
    // No answer of this suite may have cost the server its process.
    expect(server.exited).toBe(false);
  });

  // ------------------------------------------------------------ findings (fixed 2026-12-02)

  it('an execute_tool span with an empty aer1.job_id is refused as invalid_job_id and records nothing', async () => {
    const r = await traces(acme, request([span({ job: '', result: 'r' })]));
    expect(r.status).toBe(200);
    expect(r.body.aer1.recorded).toBe(0);
    expect(r.body.aer1.jobs).toEqual([]);
    expect(r.body.aer1.rejected.map((x: { reason: string; job_id: unknown }) => [x.reason, x.job_id])).toEqual([['invalid_job_id', null]]);
    expect(r.body.partialSuccess.errorMessage).toContain('must not be empty');
  });

  it('spans, closes and agent spans naming an empty job (gen_ai.conversation.id "") are refused by name or not recorded, never 500, and other spans of the batch are recorded', async () => {
    const job = `beside-empty-${hex(4)}`;
    const first = await traces(acme, request([span({ conversation: '', result: 'a' }), span({ job, result: 'kept' })]));
    expect(first.status).toBe(200);
    expect(first.body.aer1.rejected.map((x: { reason: string }) => x.reason)).toEqual(['invalid_job_id']);
    expect(first.body.aer1.recorded).toBe(1);
    expect((await timeline(job)).body.entries).toHaveLength(1);
    const second = await traces(acme, request([span({ conversation: '', result: 'b', close: true }), span({ name: 'invoke_agent', op: 'invoke_agent', tool: null, job: '' })]));
    expect(second.status).toBe(200);
    expect(leaksInternals(second.text)).toBeNull();
    expect(second.body.aer1).toMatchObject({ recorded: 0, duplicates: 0, not_recorded: 1, jobs: [] });
    expect(second.body.aer1.rejected.map((x: { reason: string }) => x.reason)).toEqual(['invalid_job_id']);
  });

  it('an entry naming the empty job is refused by the timeline endpoints too (append 422, import 422, an empty path segment 404)', async () => {
    const job = `named-${hex(4)}`;
    const entry = makeEntry('', 1, '0'.repeat(64));
    const append = await call(url, 'POST', `/api/jobs/${job}/entries`, { key: acme, body: JSON.stringify(entry) });
    expect(append.status).toBe(422);
    const put = await call(url, 'PUT', `/api/jobs/${job}/timeline`, { key: acme, body: JSON.stringify([{ ...entry, close: true }]) });
    expect(put.status).toBe(422);
    expect((await call(url, 'POST', '/api/jobs//entries', { key: acme, body: JSON.stringify(entry) })).status).toBe(404);
    expect((await call(url, 'POST', '/api/jobs//close', { key: acme })).status).toBe(404);
    expect((await timeline(job)).status).toBe(404);
  });

  it("another owner's key cannot squat a span id: the owner's own execute_tool and invoke_agent spans are recorded in its job", async () => {
    const trace = hex(16);
    const tool = hex(8);
    const agent = hex(8);
    const attackerJob = `squat-${hex(4)}`;
    const victimJob = `victim-${hex(4)}`;
    // The attacker learned the trace and span ids (a traceparent header sent to its tool server) and records them first.
    const squat = await traces(evil, request([span({ trace, span: tool, job: attackerJob, result: 'junk' }), span({ trace, span: agent, name: 'invoke_agent', op: 'invoke_agent', tool: null, job: attackerJob })]));
    expect(squat.body.aer1.recorded).toBe(2);
    const own = await traces(
      acme,
      request([
        span({ trace, span: tool, parent: agent, job: victimJob, result: '{"hits":3}' }),
        span({ trace, span: agent, name: 'invoke_agent', op: 'invoke_agent', tool: null, job: victimJob, end: '1790000001000000000' }),
      ]),
    );
    expect(own.body.aer1.rejected).toEqual([]);
    expect(own.body.aer1.recorded).toBe(2);
    const t = await timeline(victimJob);
    expect(t.status).toBe(200);
    expect(t.body.entries.map((e: { trace_id: string; span_id: string; close?: boolean }) => [e.trace_id, e.span_id, e.close === true])).toEqual([[trace, tool, true]]);
    // Two receipts for one span id: one each owner's; the owner's again is recorded once.
    const squatted = (await timeline(attackerJob)).body.entries[0].id as string;
    expect(t.body.entries[0].id).not.toBe(squatted);
    const again = await traces(acme, request([span({ trace, span: tool, parent: agent, job: victimJob, result: '{"hits":3}' })]));
    expect(again.body.aer1).toMatchObject({ recorded: 0, duplicates: 1, rejected: [] });
  });

  it("a receipt posted by another owner under the id an owner's span derives refuses that span by name (receipt_id_taken), never as a duplicate", async () => {
    const trace = hex(16);
    const id = hex(8);
    const job = `taken-${hex(4)}`;
    // Owner names, job ids and trace/span ids are not secrets: the attacker computes the id and posts a receipt under it first.
    const taken = spanReceiptId('owner:acme', job, trace, id);
    const posted = await call(url, 'POST', '/api/receipts', { key: evil, body: JSON.stringify({ ...JSON.parse(freshReceipt().text), id: taken }) });
    expect(posted.status).toBe(201);
    const r = await traces(acme, request([span({ trace, span: id, job, result: 'r' })]));
    expect(r.status).toBe(200);
    expect(r.body.aer1).toMatchObject({ recorded: 0, duplicates: 0 });
    expect(r.body.aer1.rejected.map((x: { reason: string; job_id: string }) => [x.reason, x.job_id])).toEqual([['receipt_id_taken', job]]);
    expect((await timeline(job)).status).toBe(404);
  });

  it('the same span ids and bytes under another job id (another owner) are recorded in the job they name, never answered as duplicates of another job', async () => {
    const trace = hex(16);
    const id = hex(8);
    const jobA = `dup-a-${hex(4)}`;
    const jobB = `dup-b-${hex(4)}`;
    const jobC = `dup-c-${hex(4)}`;
    expect((await traces(acme, request([span({ trace, span: id, job: jobA, result: 'same' })]))).body.aer1.recorded).toBe(1);
    const r = await traces(evil, request([span({ trace, span: id, job: jobB, result: 'same' })]));
    expect(r.status).toBe(200);
    expect(r.body.aer1).toMatchObject({ recorded: 1, duplicates: 0, rejected: [] });
    expect((await timeline(jobB)).body.entries.map((e: { span_id: string }) => e.span_id)).toEqual([id]);
    // The same owner too: another job is another record.
    const mine = await traces(acme, request([span({ trace, span: id, job: jobC, result: 'same' })]));
    expect(mine.body.aer1).toMatchObject({ recorded: 1, duplicates: 0, rejected: [] });
    expect((await timeline(jobC)).body.entries).toHaveLength(1);
  });

  it("a span refused in a request (another owner's job) is not counted as already recorded: its copy for an own job is recorded", async () => {
    const foreign = `foreign-${hex(4)}`;
    expect((await traces(evil, request([span({ job: foreign, result: '1' })]))).body.aer1.recorded).toBe(1);
    const trace = hex(16);
    const id = hex(8);
    const mine = `mine-${hex(4)}`;
    const r = await traces(acme, request([span({ trace, span: id, job: foreign, result: 's' }), span({ trace, span: id, job: mine, result: 's' })]));
    expect(r.body.aer1.rejected.map((x: { reason: string; job_id: string }) => [x.reason, x.job_id])).toEqual([['not_owner', foreign]]);
    expect(r.body.aer1.duplicates).toBe(0);
    expect(r.body.aer1.recorded).toBe(1);
    expect((await timeline(mine)).body.entries.map((e: { span_id: string }) => e.span_id)).toEqual([id]);
    expect((await timeline(foreign)).body.entries).toHaveLength(1);
  });

  it('a span sent twice in one request for one job is recorded once (the second a duplicate), with other bytes the second is span_conflict', async () => {
    const job = `twice-${hex(4)}`;
    const trace = hex(16);
    const id = hex(8);
    const same = await traces(acme, request([span({ trace, span: id, job, result: 's' }), span({ trace, span: id, job, result: 's' })]));
    expect(same.body.aer1).toMatchObject({ recorded: 1, duplicates: 1, rejected: [] });
    const other = await traces(acme, request([span({ trace, span: hex(8), job, result: 'x', start: '1790000009000000000' }), span({ trace, span: id, job, result: 'changed' })]));
    expect(other.body.aer1.recorded).toBe(1);
    expect(other.body.aer1.rejected.map((x: { reason: string }) => x.reason)).toEqual(['span_conflict']);
    expect((await timeline(job)).body.entries).toHaveLength(2);
  });

  it('a protobuf tool result that is not UTF-8 is refused result_not_utf8 by name and records nothing', async () => {
    const job = `pb-utf8-${hex(4)}`;
    const sent = Buffer.from([0xff, 0xfe, 0x41]);
    const kv = Buffer.concat([field(0x0a, Buffer.from('gen_ai.tool.call.result')), field(0x12, field(0x0a, sent))]);
    // The answer is protobuf: read as bytes (Reply.text would decode it as UTF-8).
    const r = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { authorization: `Bearer ${acme}`, 'content-type': 'application/x-protobuf' }, body: new Uint8Array(pbRequestOf(pbSpanBytes({ job }, [kv]))) });
    expect(r.status).toBe(200);
    const answer = PbResponse.decode(Buffer.from(await r.arrayBuffer()));
    expect(Number(answer.partialSuccess.rejectedSpans)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toContain('result_not_utf8');
    expect((await timeline(job)).status).toBe(404);
  });

  it('an OTLP/JSON tool result holding a lone surrogate (\\ud800) is refused result_not_utf8 by name; a U+FFFD sent as such is recorded as sent', async () => {
    const job = `json-surrogate-${hex(4)}`;
    const r = await traces(acme, request([span({ job, result: 'a\ud800b' }), span({ job, result: '\ufffd', start: '1790000001000000000' })]));
    expect(r.status).toBe(200);
    expect(r.body.aer1.rejected.map((x: { reason: string; job_id: string }) => [x.reason, x.job_id])).toEqual([['result_not_utf8', job]]);
    expect(r.body.aer1.recorded).toBe(1);
    expect((await timeline(job)).body.entries.map((e: { canonical_bytes: string }) => e.canonical_bytes)).toEqual([Buffer.from([0xef, 0xbf, 0xbd]).toString('base64')]);
  });

  // ------------------------------------------------------------ resisted (pin behaviour)

  it('a gzip body that inflates past the body limit is refused with 413 and records nothing', async () => {
    const job = `bomb-${hex(4)}`;
    const padded = request([span({ job, result: 'x'.repeat(10), extra: [{ key: 'pad', value: { stringValue: ' '.repeat(3 * 1024 * 1024) } }] })]);
    const r = await traces(acme, gzipSync(padded), 'application/json', { 'content-encoding': 'gzip' });
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('body_too_large');
    expect((await timeline(job)).status).toBe(404);
  });

  it('gzip that does not inflate is 400 invalid_content_encoding; an unknown encoding or media type is 415', async () => {
    expect((await traces(acme, Buffer.from('not gzip'), 'application/json', { 'content-encoding': 'gzip' })).body.error).toBe('invalid_content_encoding');
    expect((await traces(acme, gzipSync('{}'), 'application/json', { 'content-encoding': 'x-gzip' })).status).toBe(415);
    expect((await traces(acme, request([span({ job: 'x' })]), 'text/plain')).status).toBe(415);
  });

  it('more than 10,000 spans in one request are 413 too_many_spans and nothing is recorded', async () => {
    const job = `many-${hex(4)}`;
    // Kept under the 1 MiB body limit: the first span names the job, the rest are bare (their job is the trace id).
    const spans: Record<string, unknown>[] = Array.from({ length: 10_001 }, (_, i) => ({ traceId: 'a'.repeat(32), spanId: i.toString(16).padStart(16, '0') }));
    spans[0] = span({ job, result: '1' });
    const r = await traces(acme, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
    expect(r.status).toBe(413);
    expect(r.body.error).toBe('too_many_spans');
    expect((await timeline(job)).status).toBe(404);
  });

  it('malformed and deeply nested protobuf is 400 otlp_decode_failed, never 500', async () => {
    expect((await traces(acme, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), 'application/x-protobuf')).body.error).toBe('otlp_decode_failed');
    // AnyValue{arrayValue{values:[AnyValue{...}]}} nested 60,000 deep (only length prefixes: built outside-in, in linear time).
    const core = field(0x0a, Buffer.from('x'));
    const prefixes: Buffer[] = [];
    let len = core.length;
    for (let d = 0; d < 60_000; d++) {
      const arr = Buffer.concat([Buffer.from([0x0a]), varint(len)]);
      const arrLen = arr.length + len;
      const any = Buffer.concat([Buffer.from([0x2a]), varint(arrLen)]);
      prefixes.push(Buffer.concat([any, arr]));
      len = any.length + arrLen;
    }
    const inner = Buffer.concat([...prefixes.reverse(), core]);
    expect(inner.length).toBe(len);
    const kv = Buffer.concat([field(0x0a, Buffer.from('deep')), field(0x12, inner)]);
    const r = await traces(acme, pbRequestOf(pbSpanBytes({ job: `deep-${hex(4)}` }, [kv])), 'application/x-protobuf');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('otlp_decode_failed');
  });

  it("spans for another owner's job are rejected not_owner and its close is 403; the owner's timeline is unchanged", async () => {
    const job = `owned-${hex(4)}`;
    expect((await traces(acme, request([span({ job, result: '1' })]))).body.aer1.recorded).toBe(1);
    const before = (await timeline(job)).body.head;
    const r = await traces(evil, request([span({ job, result: 'evil', close: true }), span({ name: 'invoke_agent', op: 'invoke_agent', tool: null, job })]));
    expect(r.body.aer1.recorded).toBe(0);
    expect(r.body.aer1.rejected.every((x: { reason: string }) => x.reason === 'not_owner')).toBe(true);
    const close = await call(url, 'POST', `/api/jobs/${job}/close`, { key: evil });
    expect(close.status).toBe(403);
    expect((await timeline(job)).body.head).toEqual(before);
  });

  it('concurrent closes of one job: exactly one closes it, the others are refused, and the chain is valid', async () => {
    const job = `race-${hex(4)}`;
    expect((await traces(acme, request([span({ job, result: '1' })]))).body.aer1.recorded).toBe(1);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? call(url, 'POST', `/api/jobs/${job}/close`, { key: acme }) : traces(acme, request([span({ job, result: `c${i}`, close: true })])))),
    );
    const closes = answers.filter((a) => a.status === 201 || (a.status === 200 && a.body.aer1.recorded === 1)).length;
    expect(closes).toBe(1);
    expect(answers.every((a) => a.status < 500)).toBe(true);
    const v = await call(url, 'GET', `/api/jobs/${job}/verify`);
    expect(v.body.verdict).toBe('valid');
    const late = await traces(acme, request([span({ job, result: 'late' })]));
    expect(late.body.aer1.rejected.map((x: { reason: string }) => x.reason)).toEqual(['job_closed']);
  });

  it("hostile job ids and tool names are escaped on the job's public page", async () => {
    const job = `<script>alert(1)</script>"><img src=x onerror=alert(2)>${hex(3)}`;
    const r = await traces(acme, request([span({ job, tool: '<b>t</b><script>x()</script>', name: '<script>s()</script>', result: '1' })]));
    expect(r.body.aer1.recorded).toBe(1);
    const page = await call(url, 'GET', `/jobs/${encodeURIComponent(job)}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).not.toContain('<script>x()');
    expect(page.text).toContain('&lt;script&gt;');
  });

  it('a 10 KB job id is refused invalid_job_id and nothing is recorded', async () => {
    const job = 'J'.repeat(10_000);
    const r = await traces(acme, request([span({ job, result: '1' })]));
    expect(r.body.aer1.recorded).toBe(0);
    expect(r.body.aer1.rejected[0].reason).toBe('invalid_job_id');
  });

  it('an attribute the ledger reads with another type fails the whole request 400 and records none of its spans', async () => {
    const job = `types-${hex(4)}`;
    const r = await traces(acme, request([span({ job, result: 'ok' }), span({ job, extra: [{ key: 'gen_ai.tool.name', value: { intValue: '7' } }] })]));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('otlp_attribute_type');
    expect((await timeline(job)).status).toBe(404);
  });
});
