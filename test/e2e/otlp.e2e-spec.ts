/**
 * OTLP traces in (issue 31, docs/otlp.md) on SQLite and PostgreSQL: the
 * OpenTelemetry JavaScript SDK's own OTLP exporters (protobuf and JSON)
 * pointed at the ledger, then the recorded timelines, receipts, endpoint
 * commitments and a coverage report; bad input answered with an OTLP error
 * and nothing recorded.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { verifyReceipt } from '../../src/core/aer1';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { hexId, jsonRequest, protoRequest, readProtoResponse, SpanSpec } from '../otlp/requests';

type Entry = Record<string, unknown>;
interface Agent {
  conversation?: string;
  jobId?: string;
  calls: { tool: string; result?: string; error?: string }[];
  close?: boolean;
}
interface AgentRun {
  results: { code: number; error?: string }[];
  spans: { trace: string; span: string; parent: string | null; name: string; start: string; end: string; attributes: Record<string, string> }[];
}

/**
 * Run test/otlp/instrumented-agent.cjs: the OpenTelemetry SDK and its OTLP exporter (`protocol`) in a process of its own,
 * exporting the agent's spans `sends` times to the ledger; resolves with each export's result (code 0 = success) and the spans.
 */
function runAgent(url: string, key: string, protocol: 'protobuf' | 'json', agent: Agent, sends = 1): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(__dirname, '../otlp/instrumented-agent.cjs'), JSON.stringify({ url, key, protocol, agent, sends })], { cwd: join(__dirname, '../..') }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout) as AgentRun);
    });
  });
}

/** supertest: the answer's bytes, whatever its media type. */
function bytes(res: unknown, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  const stream = res as NodeJS.ReadableStream;
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => cb(null, Buffer.concat(chunks)));
}

describe.each(DIALECTS)('OTLP traces in on %s', (dialect) => {
  let t: TestApp;
  let base: string;
  let gatewayKey: string;
  beforeAll(async () => {
    t = await startApp(dialect);
    const server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gatewayKey = (await t.app.get(ApiKeysService).create('otlp-gateway', 'producer', { gateway: true })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  const agentRun = (protocol: 'protobuf' | 'json', agent: Agent, sends = 1) => runAgent(`${base}/v1/traces`, t.keys.producer, protocol, agent, sends);
  const timeline = async (job: string) => (await t.http.get(`/api/jobs/${job}/timeline`)).body as { entries: Entry[]; head: { seq: number; closed: boolean }; commitments: Entry[] };
  const head = async () => ((await t.http.get('/api/ledger/head')).body as { position: number }).position;
  /** POST /v1/traces by hand: `body` is the parsed JSON answer, or the bytes of a protobuf one. */
  const post = async (body: Buffer | string, type: string, key: string | null = t.keys.producer, encoding?: string) => {
    let r = t.http.post('/v1/traces').set('Content-Type', type);
    if (key) r = r.set('Authorization', `Bearer ${key}`);
    if (encoding) r = r.set('Content-Encoding', encoding);
    const res = await r.buffer(true).parse(bytes).send(body);
    const raw = res.body as Buffer;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const parsed: any = /json/.test(String(res.headers['content-type'])) ? JSON.parse(raw.toString('utf8')) : raw;
    return { status: res.status, headers: res.headers, body: parsed };
  };

  it('records a job exported with the protobuf exporter: tool calls in start order, the failed call, the close and the ledger commitment', async () => {
    const run = await agentRun('protobuf', { conversation: 'conv-proto', calls: [{ tool: 'search', result: '{"hits": [1, 2]}\n' }, { tool: 'fetch_page', error: 'upstream 503' }, { tool: 'summarize', result: 'done' }] });
    expect(run.results).toEqual([{ code: 0 }]);
    const tl = await timeline('conv-proto');
    expect(tl.entries.map((e) => [e.seq, e.tool, e.provenance_class, e.status, e.close ?? false])).toEqual([
      [1, 'search', 'LOGGED BY AGENT', 'ok', false],
      [2, 'fetch_page', 'LOGGED BY AGENT', 'error', false],
      // The invoke_agent span came in the same request: the last tool call closes, no closing entry of its own.
      [3, 'summarize', 'LOGGED BY AGENT', 'ok', true],
    ]);
    // The result exactly as sent; no result: the attributes as JSON, and the entry says so.
    expect(Buffer.from(tl.entries[0].canonical_bytes as string, 'base64').toString('utf8')).toBe('{"hits": [1, 2]}\n');
    expect(tl.entries[0].result_captured).toBe(true);
    expect(tl.entries[1].result_captured).toBe(false);
    expect(Buffer.from(tl.entries[1].canonical_bytes as string, 'base64').toString('utf8')).toBe('{"gen_ai.conversation.id":"conv-proto","gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"fetch_page"}');
    expect(tl.head).toMatchObject({ seq: 3, closed: true });
    const verify = await t.http.get('/api/jobs/conv-proto/verify');
    expect(verify.body.verdict).toBe('valid');
    // The failed call is counted and marked on the job page, in red, before the chain's (valid) verdict.
    expect(verify.body.failed_calls).toBe(1);
    const page = (await t.http.get('/jobs/conv-proto')).text;
    const lead = /<section class="verdict bad" id="verdict"><div class="line bad" id="failed-calls">([\s\S]*?)<\/div>/.exec(page)?.[1];
    expect(lead?.replace(/<[^>]*>/g, '')).toBe('✗ 1 of 3 calls failed (recorded status not ok): a valid chain proves only that the record is intact');
    expect(/<tr id="entry-2" class="failed-call">[\s\S]*?<\/tr>/.exec(page)?.[0]).toContain('call failed: <bdi>error</bdi>');
    expect(page.match(/call failed:/g)).toHaveLength(1);
    expect(tl.commitments).toHaveLength(1);
    expect(tl.commitments[0]).toMatchObject({ issued_by: 'ledger', binding_at_record: true });
    const failed = await t.http.get(`/api/receipts/${tl.entries[1].id as string}`);
    expect(failed.status).toBe(200);
    const receipt = JSON.parse(failed.body.raw ?? JSON.stringify(failed.body.receipt)) as Entry;
    expect(receipt).toMatchObject({ status: 'error', tool: 'fetch_page', tool_context: { error_message: 'upstream 503' } });
    expect(verifyReceipt(receipt).verdict).toBe('valid');
  });

  it('records with the JSON exporter; the same spans again are recorded once', async () => {
    const run = await agentRun('json', { jobId: 'job-otlp-json', calls: [{ tool: 'lookup', result: 'a' }, { tool: 'lookup', result: 'b' }] }, 3);
    expect(run.results).toEqual([{ code: 0 }, { code: 0 }, { code: 0 }]);
    const before = await head();
    // The same spans as protobuf, by hand: recorded already, nothing appended.
    const again = await post(protoRequest(run.spans.map(toSpec)), 'application/x-protobuf');
    expect(again.status).toBe(200);
    // The agent span closed the job with its last tool call (no entry of its own): sent again, it is a close of a closed job, not recorded.
    expect(readProtoResponse(again.body as Buffer)).toEqual({ rejected: 0, message: 'recorded 0 span(s), 2 already recorded; 2 span(s) not recorded (not gen_ai.operation.name execute_tool, or a close of nothing)' });
    expect(await head()).toBe(before);
    const tl = await timeline('job-otlp-json');
    expect(tl.entries.map((e) => [e.tool, e.close ?? false])).toEqual([['lookup', false], ['lookup', true]]);
    expect(tl.head.closed).toBe(true);
  });

  it('answers OTLP: partial_success names spans of a closed job and spans sent again with other bytes; other spans are counted', async () => {
    const first: SpanSpec[] = [{ trace: hexId(7, 16), span: hexId(1, 8), name: 'execute_tool a', start: 1, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'a', 'aer1.job_id': 'job-closing', 'gen_ai.tool.call.result': 'one', 'aer1.job.close': true } }];
    const r1 = await post(protoRequest(first), 'application/x-protobuf');
    expect(r1.status).toBe(200);
    expect(r1.headers['content-type']).toMatch(/^application\/x-protobuf/);
    expect(readProtoResponse(r1.body as Buffer)).toEqual({ rejected: 0, message: '' });
    const late: SpanSpec = { ...first[0], span: hexId(2, 8), name: 'execute_tool late', attrs: { ...first[0].attrs, 'aer1.job.close': false } };
    const changed: SpanSpec = { ...first[0], attrs: { ...first[0].attrs, 'gen_ai.tool.call.result': 'other' } };
    const chat: SpanSpec = { trace: hexId(7, 16), span: hexId(3, 8), name: 'chat', start: 0, attrs: { 'gen_ai.operation.name': 'chat' } };
    const before = await head();
    const r2 = await post(jsonRequest([late, changed, chat]), 'application/json');
    expect(r2.status).toBe(200);
    expect(r2.body.partialSuccess.rejectedSpans).toBe('2');
    expect(r2.body.partialSuccess.errorMessage).toContain('job_closed: job "job-closing" is closed: tool call "a" (span "execute_tool late"');
    expect(r2.body.partialSuccess.errorMessage).toContain('span_conflict');
    expect(r2.body.partialSuccess.errorMessage).toContain('1 span(s) not recorded');
    expect(r2.body.aer1).toMatchObject({ recorded: 0, not_recorded: 1 });
    expect((r2.body.aer1.rejected as Entry[]).map((x) => x.reason).sort()).toEqual(['job_closed', 'span_conflict']);
    expect(await head()).toBe(before);
  });

  it('refuses bad input with a reason code and records nothing of it', async () => {
    const before = await head();
    const bad = await post(Buffer.from('this is not protobuf at all'), 'application/x-protobuf');
    expect([bad.status, bad.body.error]).toEqual([400, 'otlp_decode_failed']);
    expect((await post('{"resourceSpans":7}', 'application/json')).body.error).toBe('otlp_decode_failed');
    const text = await post('hello', 'text/plain');
    expect([text.status, text.body.error]).toEqual([415, 'unsupported_media_type']);
    // Attributes that are not strings: the whole body is refused, the good span with it.
    const good: SpanSpec = { trace: hexId(8, 16), span: hexId(1, 8), name: 'execute_tool ok', start: 1, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'ok', 'aer1.job_id': 'job-bad-input' } };
    const typed = await post(protoRequest([good, { ...good, span: hexId(2, 8), attrs: { ...good.attrs, 'gen_ai.tool.name': 12 } }]), 'application/x-protobuf');
    expect([typed.status, typed.body.error, typed.body.attribute, typed.body.type]).toEqual([400, 'otlp_attribute_type', 'gen_ai.tool.name', 'int']);
    // 100,000 spans in one body: over the body limit once decompressed (413), or too many spans where the limit is raised (unit test).
    const many = Array.from({ length: 100_000 }, (_, k): SpanSpec => ({ trace: hexId(9, 16), span: hexId(k + 1, 8), name: 'execute_tool x', start: k, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'x' } }));
    const big = await post(gzipSync(protoRequest(many)), 'application/x-protobuf', t.keys.producer, 'gzip');
    expect([big.status, big.body.error]).toEqual([413, 'body_too_large']);
    // A span with a 50 MB attribute.
    const huge = await post(protoRequest([{ ...good, attrs: { ...good.attrs, 'gen_ai.tool.call.result': 'x'.repeat(50 * 1024 * 1024) } }]), 'application/x-protobuf');
    expect([huge.status, huge.body.error]).toEqual([413, 'body_too_large']);
    expect(await head()).toBe(before);
    expect((await t.http.get('/api/jobs/job-bad-input/timeline')).status).toBe(404);
  }, 120_000); // encodes 100,000 spans and a 50 MB attribute in the test process: 60 s and more on a loaded 2-core machine

  it('needs a producer key (401, 403) and records a gateway key as OBSERVED VIA GATEWAY', async () => {
    const body = protoRequest([{ trace: hexId(10, 16), span: hexId(1, 8), name: 'execute_tool g', start: 1, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'g', 'aer1.job_id': 'job-gateway' } }]);
    expect((await post(body, 'application/x-protobuf', null)).status).toBe(401);
    const auditor = await post(body, 'application/x-protobuf', t.keys.auditor);
    expect([auditor.status, auditor.body.error]).toEqual([403, 'forbidden_role']);
    expect((await post(gzipSync(body), 'application/x-protobuf', gatewayKey, 'gzip')).status).toBe(200);
    expect((await timeline('job-gateway')).entries.map((e) => e.provenance_class)).toEqual(['OBSERVED VIA GATEWAY']);
    // Another owner's key may not extend it.
    const other = await post(protoRequest([{ trace: hexId(10, 16), span: hexId(2, 8), name: 'execute_tool h', start: 2, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'h', 'aer1.job_id': 'job-gateway' } }]), 'application/x-protobuf');
    expect(readProtoResponse(other.body as Buffer).message).toContain('not_owner');
  });

  it('closes with POST /api/jobs/{id}/close, then refuses spans for the job by name', async () => {
    expect((await agentRun('protobuf', { conversation: 'conv-open', calls: [{ tool: 'step', result: '1' }], close: false })).results).toEqual([{ code: 0 }]);
    expect((await timeline('conv-open')).head).toMatchObject({ seq: 1, closed: false });
    const c = await t.http.post('/api/jobs/conv-open/close').set('Authorization', `Bearer ${t.keys.producer}`);
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ job_id: 'conv-open', head: { seq: 2, closed: true }, appended: [{ seq: 2, tool: 'aer1.job.close' }] });
    expect((await t.http.get('/api/jobs/conv-open/verify')).body.verdict).toBe('valid');
    const again = await t.http.post('/api/jobs/conv-open/close').set('Authorization', `Bearer ${t.keys.producer}`);
    expect([again.status, again.body.error]).toEqual([409, 'timeline_closed']);
    expect((await t.http.post('/api/jobs/no-such-job/close').set('Authorization', `Bearer ${t.keys.producer}`)).status).toBe(404);
    const more = await agentRun('json', { conversation: 'conv-open', calls: [{ tool: 'after_close', result: '2' }], close: false });
    expect(more.results).toEqual([{ code: 0 }]);
    const r = await post(jsonRequest(more.spans.map(toSpec)), 'application/json');
    expect(r.body.partialSuccess.rejectedSpans).toBe('1');
    expect(r.body.partialSuccess.errorMessage).toContain('job_closed: job "conv-open" is closed: tool call "after_close"');
  });

  it('a coverage report over a job recorded through OTLP shows LOGGED BY AGENT', async () => {
    const plan = await t.http.post('/api/plans').set('Authorization', `Bearer ${t.keys.compliance}`).set('Content-Type', 'application/json')
      .send(JSON.stringify({ job_id: 'conv-coverage', title: 'otlp plan', expected_actions: [{ action_id: 'find', tool: 'search' }, { action_id: 'pay', tool: 'pay', must_succeed: true, accepted_provenance: ['LOGGED BY AGENT'] }] }));
    expect(plan.status).toBe(201);
    expect((await agentRun('protobuf', { conversation: 'conv-coverage', calls: [{ tool: 'search', result: 'x' }, { tool: 'pay', error: 'declined' }] })).results).toEqual([{ code: 0 }]);
    const r = await t.http.post('/api/coverage-reports').set('Authorization', `Bearer ${t.keys.auditor}`).set('Content-Type', 'application/json').send(JSON.stringify({ job_id: 'conv-coverage' }));
    expect(r.status).toBe(201);
    const report = (await t.http.get(`/api/coverage-reports/${r.body.report_id as string}`)).body.report as { actions: { action_id: string; status: string; evidence: Entry[]; reported_only_evidence: Entry[] }[] };
    const find = report.actions.find((a) => a.action_id === 'find')!;
    const pay = report.actions.find((a) => a.action_id === 'pay')!;
    expect(find.reported_only_evidence.map((e) => [e.provenance_class, e.receipt_status])).toEqual([['LOGGED BY AGENT', 'ok']]);
    expect(pay.evidence.map((e) => [e.provenance_class, e.outcome, e.receipt_status])).toEqual([['LOGGED BY AGENT', 'failure', 'error']]);
    expect(pay.status).toBe('failed');
  });

  /** Register a plan for `job` naming `tools` (LOGGED BY AGENT accepted), before anything is recorded. */
  const planFor = async (job: string, tools: string[]) => {
    const plan = await t.http.post('/api/plans').set('Authorization', `Bearer ${t.keys.compliance}`).set('Content-Type', 'application/json')
      .send(JSON.stringify({ job_id: job, title: 'otlp close', unplanned: 'flag', expected_actions: tools.map((tool) => ({ action_id: tool, tool, accepted_provenance: ['LOGGED BY AGENT'] })) }));
    expect(plan.status).toBe(201);
  };
  /** Issue a coverage report for `job` and read it back (`report_id` and the report content). */
  const coverageOf = async (job: string) => {
    const r = await t.http.post('/api/coverage-reports').set('Authorization', `Bearer ${t.keys.auditor}`).set('Content-Type', 'application/json').send(JSON.stringify({ job_id: job }));
    expect(r.status).toBe(201);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return (await t.http.get(`/api/coverage-reports/${r.body.report_id as string}`)).body as { report_id: string; report: any };
  };
  const verified = async (job: string) => {
    const v = (await t.http.get(`/api/jobs/${job}/verify`)).body as Entry;
    return [v.verdict, v.closed, v.truncation_excluded];
  };

  it('a job closed by its enclosing invoke_agent in the same request has full coverage: the last tool call closes, nothing unplanned', async () => {
    await planFor('conv-full-agent', ['search', 'summarize']);
    expect((await agentRun('protobuf', { conversation: 'conv-full-agent', calls: [{ tool: 'search', result: 'x' }, { tool: 'summarize', result: 'y' }] })).results).toEqual([{ code: 0 }]);
    const tl = await timeline('conv-full-agent');
    expect(tl.entries.map((e) => [e.seq, e.tool, e.close ?? false])).toEqual([[1, 'search', false], [2, 'summarize', true]]);
    expect(await verified('conv-full-agent')).toEqual(['valid', true, true]);
    const { report } = await coverageOf('conv-full-agent');
    expect(report.result).toBe('full_coverage');
    expect(report.findings).toEqual([]);
    expect(report.unplanned).toEqual({ policy: 'flag', finding: false, actions: [] });
    expect(report.counts).toMatchObject({ covered: 2, expected_actions: 2, recorded_actions: 2, unplanned_actions: 0 });
    expect(report.close).toBeUndefined();
  });

  it('a job closed later (close endpoint, or invoke_agent in a later request) ends with the ledger closing marker aer1.job.close: full coverage, the marker listed as the close', async () => {
    // (b) The close endpoint.
    await planFor('conv-full-close', ['step']);
    expect((await agentRun('json', { conversation: 'conv-full-close', calls: [{ tool: 'step', result: '1' }], close: false })).results).toEqual([{ code: 0 }]);
    const c = await t.http.post('/api/jobs/conv-full-close/close').set('Authorization', `Bearer ${t.keys.producer}`);
    expect(c.status).toBe(201);
    let tl = await timeline('conv-full-close');
    expect(tl.entries.map((e) => [e.seq, e.tool, e.close ?? false])).toEqual([[1, 'step', false], [2, 'aer1.job.close', true]]);
    expect(Buffer.from(tl.entries[1].canonical_bytes as string, 'base64').toString('utf8')).toBe('{"closed_by":"api","job_id":"conv-full-close"}');
    expect(await verified('conv-full-close')).toEqual(['valid', true, true]);
    const issued = await coverageOf('conv-full-close');
    let report = issued.report;
    expect([report.result, report.findings, report.unplanned.actions]).toEqual(['full_coverage', [], []]);
    expect(report.counts).toMatchObject({ covered: 1, recorded_actions: 1, unplanned_actions: 0 });
    expect(report.close).toEqual({ seq: 2, tool: 'aer1.job.close', receipt_id: tl.entries[1].id });
    const page = await t.http.get(`/coverage/${issued.report_id}`);
    expect(page.text).toMatch(/Closed by the ledger's closing marker, <a href="[^"]*#entry-2">entry 2<\/a> \(<bdi>aer1\.job\.close<\/bdi>\): the close, not an action\./);

    // (c) The invoke_agent span in a later request than the tool calls: its receipt, with the reserved tool.
    await planFor('job-late-agent', ['fetch']);
    const trace = hexId(21, 16);
    const call: SpanSpec = { trace, span: hexId(2, 8), parent: hexId(1, 8), name: 'execute_tool fetch', start: 1, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'fetch', 'aer1.job_id': 'job-late-agent', 'gen_ai.tool.call.result': 'r' } };
    const agent: SpanSpec = { trace, span: hexId(1, 8), name: 'invoke_agent late', start: 0, end: 5, attrs: { 'gen_ai.operation.name': 'invoke_agent', 'aer1.job_id': 'job-late-agent' } };
    expect((await post(protoRequest([call]), 'application/x-protobuf')).status).toBe(200);
    const late = await post(jsonRequest([agent]), 'application/json');
    expect(late.body.aer1).toMatchObject({ recorded: 1, jobs: [{ job_id: 'job-late-agent', head: { seq: 2, closed: true }, appended: [{ seq: 2, tool: 'aer1.job.close' }] }] });
    tl = await timeline('job-late-agent');
    expect(tl.entries.map((e) => [e.seq, e.tool, e.close ?? false])).toEqual([[1, 'fetch', false], [2, 'aer1.job.close', true]]);
    expect(Buffer.from(tl.entries[1].canonical_bytes as string, 'base64').toString('utf8')).toBe('{"aer1.job_id":"job-late-agent","gen_ai.operation.name":"invoke_agent"}');
    const receipt = (await t.http.get(`/api/receipts/${tl.entries[1].id as string}`)).body;
    expect(JSON.parse(receipt.raw ?? JSON.stringify(receipt.receipt))).toMatchObject({ tool: 'aer1.job.close', tool_context: { source: 'otlp', span_name: 'invoke_agent late' } });
    expect(await verified('job-late-agent')).toEqual(['valid', true, true]);
    report = (await coverageOf('job-late-agent')).report;
    expect([report.result, report.findings, report.unplanned.actions]).toEqual(['full_coverage', [], []]);
    expect(report.close).toEqual({ seq: 2, tool: 'aer1.job.close', receipt_id: tl.entries[1].id });
    // The same agent span again: recorded once.
    expect((await post(jsonRequest([agent]), 'application/json')).body.aer1).toMatchObject({ recorded: 0, duplicates: 1 });
  });

  it('the closing marker is no call: an invoke_agent span with status ERROR closes with a marker of status error, and the failed calls count only the tool calls', async () => {
    const trace = hexId(23, 16);
    const job = 'job-agent-failed';
    const ok: SpanSpec = { trace, span: hexId(2, 8), parent: hexId(1, 8), name: 'execute_tool fetch', start: 1, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'fetch', 'aer1.job_id': job, 'gen_ai.tool.call.result': 'r' } };
    const bad: SpanSpec = { ...ok, span: hexId(3, 8), name: 'execute_tool parse', start: 2, attrs: { ...ok.attrs, 'gen_ai.tool.name': 'parse' }, error: 'bad input' };
    const agent: SpanSpec = { trace, span: hexId(1, 8), name: 'invoke_agent failing', start: 0, end: 5, attrs: { 'gen_ai.operation.name': 'invoke_agent', 'aer1.job_id': job }, error: 'agent gave up' };
    expect((await post(protoRequest([ok, bad]), 'application/x-protobuf')).status).toBe(200);
    // The agent span in a later request: the ledger's closing marker, with the agent span's status.
    expect((await post(jsonRequest([agent]), 'application/json')).body.aer1).toMatchObject({ recorded: 1, jobs: [{ appended: [{ seq: 3, tool: 'aer1.job.close', status: 'error' }] }] });
    const tl = await timeline(job);
    expect(tl.entries.map((e) => [e.seq, e.tool, e.status, e.close ?? false])).toEqual([[1, 'fetch', 'ok', false], [2, 'parse', 'error', false], [3, 'aer1.job.close', 'error', true]]);
    const v = (await t.http.get(`/api/jobs/${job}/verify`)).body;
    expect([v.verdict, v.entry_count, v.failed_calls]).toEqual(['valid', 3, 1]);
    expect(v.headline).toMatch(/; 1 of 2 recorded calls failed$/);
    const page = (await t.http.get(`/jobs/${job}`)).text;
    expect(page).toContain('1 of 2 calls failed (recorded status not ok)');
    expect(page.match(/call failed:/g)).toHaveLength(1);
    expect(/<tr id="entry-3"[^>]*>/.exec(page)?.[0]).toBe('<tr id="entry-3">');
  });

  it('refuses the reserved tool aer1.job.close from producers (422 reserved_tool; a span in partial_success): nothing written', async () => {
    const before = await head();
    const entry = { seq: 1, job_id: 'job-reserved', id: '0b7e4a52-51a4-4c3e-9d0e-5f7b2f2d9a11', tool: 'aer1.job.close', provenance_class: 'LOGGED BY AGENT', canonical_bytes: Buffer.from('x').toString('base64'), prev_digest: '0'.repeat(64), close: true };
    const append = await t.http.post('/api/jobs/job-reserved/entries').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(entry));
    expect([append.status, append.body.error, append.body.reasons]).toEqual([422, 'reserved_tool', ['reserved_tool']]);
    const imported = await t.http.put('/api/jobs/job-reserved/timeline').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify([entry]));
    expect([imported.status, imported.body.error]).toEqual([422, 'reserved_tool']);
    const span: SpanSpec = { trace: hexId(22, 16), span: hexId(1, 8), name: 'execute_tool aer1.job.close', start: 1, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'aer1.job.close', 'aer1.job_id': 'job-reserved' } };
    const r = await post(jsonRequest([span]), 'application/json');
    expect(r.status).toBe(200);
    expect(r.body.partialSuccess.rejectedSpans).toBe('1');
    expect(r.body.aer1.rejected.map((x: Entry) => [x.reason, x.job_id])).toEqual([['reserved_tool', 'job-reserved']]);
    expect(await head()).toBe(before);
    expect((await t.http.get('/api/jobs/job-reserved/timeline')).status).toBe(404);
  });

  it('runs of entries of several jobs in one request (each head moved once per call): the read models are what replaying the events gives', async () => {
    const jobs = ['runs-a', 'runs-b', 'runs-c'];
    const spans = (from: number, n: number, close: boolean): SpanSpec[] =>
      Array.from({ length: n }, (_, k) => {
        const i = from + k;
        const job = jobs[i % 3];
        const last = close && k >= n - 3;
        return { trace: hexId(40 + (i % 3), 16), span: hexId(1000 + i, 8), name: `execute_tool t${i}`, start: i + 1, attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': `t${i % 5}`, 'aer1.job_id': job, 'gen_ai.tool.call.result': `r${i}`, ...(last ? { 'aer1.job.close': true } : {}) } };
      });
    // Interleaved jobs, a first request and a second one extending the same timelines, the last entries closing them.
    for (const [from, n, close] of [[0, 150, false], [150, 150, true]] as const) {
      const r = await post(jsonRequest(spans(from, n, close)), 'application/json');
      expect([r.status, r.body.aer1.recorded, r.body.aer1.rejected]).toEqual([200, n, []]);
    }
    for (const job of jobs) {
      const tl = await timeline(job);
      expect(tl.head).toMatchObject({ seq: 100, closed: true });
      expect(tl.entries.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, k) => k + 1));
      expect((await t.http.get(`/api/jobs/${job}/verify`)).body.verdict).toBe('valid');
    }
    const { LedgerService } = await import('../../src/ledger/ledger.service');
    const ledger = t.app.get(LedgerService);
    const audit = await ledger.auditProjections();
    expect([audit.ok, audit.replay_failure, audit.tables.filter((x) => !x.ok)]).toEqual([true, null, []]);
    const before = await Promise.all(jobs.map((j) => t.http.get(`/api/jobs/${j}/timeline`).then((r) => r.body)));
    await ledger.rebuildProjections();
    expect(await Promise.all(jobs.map((j) => t.http.get(`/api/jobs/${j}/timeline`).then((r) => r.body)))).toEqual(before);
  });
});

/** A span the agent sent, to send again by hand exactly (ids, times, attributes). */
function toSpec(s: AgentRun['spans'][number]): SpanSpec {
  return { trace: s.trace, span: s.span, parent: s.parent ?? undefined, name: s.name, start: 0, startNano: s.start, endNano: s.end, attrs: s.attributes };
}
