/** The OTLP receiver's pure parts: decoding (protobuf and JSON agree), the span plan, the documented attribute JSON. */
import { createHash } from 'node:crypto';
import { verifyReceipt } from '../../src/core/aer1';
import { LedgerError } from '../../src/core/errors';
import { decodeJson, decodeProtobuf, encodeResponse, OTLP_MAX_SPANS, pbNanos } from '../../src/otlp/otlp-decode';
import fc from 'fast-check';
import { summary } from '../../src/otlp/otlp.controller';
import { attributesJson, planSpans, receiptDocument, receiptText, spanReceiptId, spanTime, SpanRecord } from '../../src/otlp/otlp-spans';
import { hexId, jsonRequest, protoRequest, readProtoResponse, SpanSpec } from './requests';

const T1 = hexId(1, 16);
const SENDER = 'owner:acme';
const tool = (n: number, start: number, attrs: Record<string, string | number | boolean>, extra: Partial<SpanSpec> = {}): SpanSpec => ({
  trace: T1,
  span: hexId(n, 8),
  parent: hexId(100, 8),
  name: `execute_tool t${n}`,
  start,
  attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': `t${n}`, ...attrs },
  ...extra,
});
const agent: SpanSpec = { trace: T1, span: hexId(100, 8), name: 'invoke_agent a', start: 0, end: 100, attrs: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': 'conv-1' } };

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return `${(e as LedgerError).status} ${(e as LedgerError).code}`;
  }
  return 'no error';
}

describe('decoding', () => {
  const specs = [agent, tool(1, 5, { 'gen_ai.conversation.id': 'conv-1', 'gen_ai.tool.call.result': '{"ok":true}', n: 7, f: 1.5, b: true }, { error: 'boom' })];

  test('protobuf and OTLP/JSON decode to the same spans', () => {
    const p = decodeProtobuf(protoRequest(specs));
    const j = decodeJson(Buffer.from(jsonRequest(specs)));
    expect(p).toEqual(j);
    expect(p[1]).toMatchObject({ trace_id: T1, span_id: hexId(1, 8), parent_span_id: hexId(100, 8), name: 'execute_tool t1', status_code: 2, status_message: 'boom' });
    expect(p[1].attributes.get('n')).toEqual({ type: 'int', value: '7' });
    expect(p[1].attributes.get('f')).toEqual({ type: 'double', value: 1.5 });
    expect(p[0].parent_span_id).toBeNull();
    expect(p[1].start - p[0].start).toBe(5_000_000n);
  });

  test('bytes that are not a request are 400 otlp_decode_failed; JSON that is not one too', () => {
    expect(codeOf(() => decodeProtobuf(Buffer.from('hello, this is not protobuf')))).toBe('400 otlp_decode_failed');
    expect(codeOf(() => decodeJson(Buffer.from('{"resourceSpans":{}}')))).toBe('400 otlp_decode_failed');
    expect(codeOf(() => decodeJson(Buffer.from('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz","spanId":"0000000000000001"}]}]}]}')))).toBe('400 otlp_decode_failed');
    expect(codeOf(() => decodeJson(Buffer.from('[1,2')))).toBe('400 malformed_json');
  });

  test(`more than ${OTLP_MAX_SPANS} spans in one request are 413 too_many_spans`, () => {
    const many = Array.from({ length: OTLP_MAX_SPANS + 1 }, (_, k) => ({ trace: T1, span: hexId(k + 1, 8), name: 's', start: k, attrs: {} }));
    expect(codeOf(() => decodeProtobuf(protoRequest(many)))).toBe('413 too_many_spans');
    expect(codeOf(() => decodeJson(Buffer.from(jsonRequest(many))))).toBe('413 too_many_spans');
    expect(decodeProtobuf(protoRequest(many.slice(1)))).toHaveLength(OTLP_MAX_SPANS);
  });

  test('a protobuf string whose bytes are not UTF-8 is flagged on the attribute value; names and keys read lossy', () => {
    const body = protoRequest([{ ...tool(1, 1, { 'gen_ai.tool.call.result': 'QQQ', 'k-QQQ': 'x' }), name: 'span QQQ' }]);
    const bad = Buffer.from(body.toString('latin1').split('QQQ').join('\xff\xfeA'), 'latin1');
    expect(bad.length).toBe(body.length);
    const [s] = decodeProtobuf(bad);
    expect(s.attributes.get('gen_ai.tool.call.result')).toEqual({ type: 'string', value: '\ufffd\ufffdA', not_utf8: true });
    expect(s.name).toBe('span \ufffd\ufffdA');
    expect(s.attributes.get('k-\ufffd\ufffdA')).toEqual({ type: 'string', value: 'x' });
    const plan = planSpans([s], SENDER);
    expect(plan.rejected.map((r) => r.reason)).toEqual(['result_not_utf8']);
    // Valid UTF-8, U+FFFD itself included, is taken as sent and not flagged.
    const ok = decodeProtobuf(protoRequest([tool(1, 1, { 'gen_ai.tool.call.result': '\ufffd' })]))[0];
    expect(ok.attributes.get('gen_ai.tool.call.result')).toEqual({ type: 'string', value: '\ufffd' });
    expect(planSpans([ok], SENDER).records).toHaveLength(1);
  });

  test('the answer encodes partial_success only when there is something to say', () => {
    expect(readProtoResponse(encodeResponse(0, ''))).toEqual({ rejected: 0, message: '' });
    expect(encodeResponse(0, '')).toHaveLength(0);
    expect(readProtoResponse(encodeResponse(3, 'job_closed'))).toEqual({ rejected: 3, message: 'job_closed' });
  });
});

describe('planSpans', () => {
  test('tool calls in start order, job ids by the documented rule, the agent span closes after them', () => {
    const specs = [
      agent,
      tool(2, 20, { 'gen_ai.conversation.id': 'conv-1' }),
      tool(1, 10, { 'gen_ai.conversation.id': 'conv-1', 'gen_ai.tool.call.result': 'r1' }),
      tool(3, 30, { 'aer1.job_id': 'job-x', 'gen_ai.conversation.id': 'conv-1' }),
      { ...tool(4, 40, {}), parent: undefined },
      { trace: T1, span: hexId(9, 8), name: 'chat', start: 1, attrs: { 'gen_ai.operation.name': 'chat' } },
    ];
    const plan = planSpans(decodeProtobuf(protoRequest(specs)), SENDER);
    expect(plan.records.map((r) => [r.kind, r.job_id, r.tool, r.close])).toEqual([
      ['tool_call', 'conv-1', 't1', false],
      ['tool_call', 'conv-1', 't2', false],
      ['tool_call', 'job-x', 't3', false],
      ['tool_call', T1, 't4', false],
      ['agent_close', 'conv-1', 'aer1.job.close', true],
      ['agent_close', 'job-x', 'aer1.job.close', true],
    ]);
    expect(plan.not_recorded).toBe(1);
    expect(plan.records[0].bytes.toString('utf8')).toBe('r1');
    expect(plan.records[0].result_captured).toBe(true);
    expect(plan.records[1].result_captured).toBe(false);
    expect(plan.records[1].bytes.toString('utf8')).toBe('{"gen_ai.conversation.id":"conv-1","gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"t2"}');
    // One agent span closing two jobs names two receipts.
    expect(plan.records[4].receipt_id).not.toBe(plan.records[5].receipt_id);
  });

  test('the result is taken exactly as sent, and an ERROR span is a failed call', () => {
    const result = '{ "b":1,  "a":"é\\u00e9" }\n';
    const [r] = planSpans(decodeJson(Buffer.from(jsonRequest([tool(1, 1, { 'gen_ai.tool.call.result': result }, { error: 'timeout' })]))), SENDER).records;
    expect(r.bytes.equals(Buffer.from(result, 'utf8'))).toBe(true);
    expect(r.status).toBe('error');
    const text = receiptText(r, 'LOGGED BY AGENT');
    const v = verifyReceipt(JSON.parse(text));
    expect(v.verdict).toBe('valid');
    expect(JSON.parse(text)).toMatchObject({ id: spanReceiptId(SENDER, T1, T1, hexId(1, 8)), tool: 't1', status: 'error', provenance_class: 'LOGGED BY AGENT', output_hash: `sha256:${createHash('sha256').update(result, 'utf8').digest('hex')}`, tool_context: { error_message: 'timeout' } });
  });

  test('a receipt document is exactly what parsing its text gives back (the service verifies the document instead of parsing the text it wrote)', () => {
    const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom('', '\ud800', 'a\udfffb', '"\\', '\u0000'));
    fc.assert(
      fc.property(text, text, text, fc.uint8Array({ maxLength: 80 }), fc.boolean(), fc.boolean(), fc.constantFrom('LOGGED BY AGENT', 'OBSERVED VIA GATEWAY'), fc.bigInt({ min: 0n, max: 253402300799999999999n }), (tool, name, message, bytes, error, captured, provenance, start) => {
        const span = { trace_id: hexId(1, 16), span_id: hexId(2, 8), parent_span_id: null, name, start, end: start + 5n, status_code: error ? 2 : 1, status_message: message, attributes: new Map() };
        const r: SpanRecord = { span, kind: 'tool_call', job_id: 'job', tool, bytes: Buffer.from(bytes), result_captured: captured, status: error ? 'error' : 'ok', close: false, receipt_id: spanReceiptId(SENDER, 'job', span.trace_id, span.span_id) };
        const doc = receiptDocument(r, provenance);
        expect(JSON.parse(receiptText(r, provenance))).toStrictEqual(doc);
        expect(receiptText(r, provenance)).toBe(JSON.stringify(doc));
      }),
      { numRuns: 500 },
    );
  });

  test('span times read from protobuf Longs are what their decimal strings give, for any 64-bit value, signed or not', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Long = require('long') as { fromString(s: string, unsigned: boolean): object };
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.boolean(), (n, unsigned) => {
        const text = unsigned ? n.toString() : BigInt.asIntN(64, n).toString();
        const long = Long.fromString(text, unsigned);
        expect(pbNanos(long)).toBe(BigInt(String(long)));
        expect(pbNanos(long)).toBe(BigInt(text));
      }),
      { numRuns: 2000 },
    );
    expect(pbNanos(undefined)).toBe(0n);
    expect(pbNanos(null)).toBe(0n);
    expect(pbNanos(1234)).toBe(1234n);
    expect(pbNanos('18446744073709551615')).toBe(18446744073709551615n);
  });

  test('aer1.job.close = true closes with that entry', () => {
    const [r] = planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'aer1.job.close': true })])), SENDER).records;
    expect(r.close).toBe(true);
  });

  test('an attribute the ledger reads with another type is 400 otlp_attribute_type, in any span', () => {
    expect(codeOf(() => planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'gen_ai.tool.name': 42 })])), SENDER))).toBe('400 otlp_attribute_type');
    expect(codeOf(() => planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'aer1.job_id': true })])), SENDER))).toBe('400 otlp_attribute_type');
    expect(codeOf(() => planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'gen_ai.tool.call.result': 1.5 })])), SENDER))).toBe('400 otlp_attribute_type');
    expect(codeOf(() => planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'aer1.job.close': 'true' })])), SENDER))).toBe('400 otlp_attribute_type');
    expect(codeOf(() => planSpans(decodeProtobuf(protoRequest([{ ...agent, attrs: { 'gen_ai.operation.name': 7 } }])), SENDER))).toBe('400 otlp_attribute_type');
  });

  test('a span without a tool name or with a job id that is not an identifier is refused alone', () => {
    const plan = planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'gen_ai.tool.name': '' }), tool(2, 2, { 'aer1.job_id': 'bad\u0007id' }), tool(3, 3, {})])), SENDER);
    expect(plan.rejected.map((r) => r.reason)).toEqual(['missing_tool_name', 'invalid_job_id']);
    expect(plan.records.map((r) => r.tool)).toEqual(['t3']);
  });

  test('a refusal names its span (trace id/span id and name), in the answer\'s message too', () => {
    const noTool: SpanSpec = { ...tool(4, 4, {}), name: 'execute_tool (unnamed)', attrs: { 'gen_ai.operation.name': 'execute_tool', 'aer1.job_id': 'job-9' } };
    const plan = planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'gen_ai.tool.name': '' }), noTool, tool(2, 2, { 'aer1.job_id': 'bad\u0007id' })])), SENDER);
    expect(plan.rejected.map((r) => [r.reason, r.message])).toEqual([
      ['missing_tool_name', `span ${T1}/${hexId(1, 8)} ("execute_tool t1") of job "${T1}": an execute_tool span needs a non-empty gen_ai.tool.name; the span was not recorded`],
      ['invalid_job_id', expect.stringMatching(new RegExp(`^span ${T1}/${hexId(2, 8)} \\("execute_tool t2"\\): job id "bad\\\\u0007id" \\(from aer1\\.job_id\\): `))],
      ['missing_tool_name', `span ${T1}/${hexId(4, 8)} ("execute_tool (unnamed)") of job "job-9": an execute_tool span needs a non-empty gen_ai.tool.name; the span was not recorded`],
    ]);
    const message = summary({ recorded: 0, duplicates: 0, not_recorded: 0, rejected: plan.rejected, jobs: [] });
    expect(message).toContain(`missing_tool_name: span ${T1}/${hexId(4, 8)} ("execute_tool (unnamed)") of job "job-9": an execute_tool span needs`);
  });

  test('an empty job id is refused invalid_job_id whichever attribute names it; an agent span naming an empty job closes nothing', () => {
    const plan = planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'aer1.job_id': '' }), tool(2, 2, { 'gen_ai.conversation.id': '' }), { ...agent, attrs: { 'gen_ai.operation.name': 'invoke_agent', 'aer1.job_id': '' } }])), SENDER);
    expect(plan.rejected.map((r) => [r.reason, r.span_id])).toEqual([['invalid_job_id', hexId(1, 8)], ['invalid_job_id', hexId(2, 8)]]);
    expect(plan.rejected[1].message).toContain('gen_ai.conversation.id');
    expect(plan.records).toEqual([]);
    expect(plan.not_recorded).toBe(1);
  });

  test('a result that is not Unicode text is refused alone: result_not_utf8 (an OTLP/JSON lone surrogate)', () => {
    const plan = planSpans(decodeJson(Buffer.from(jsonRequest([tool(1, 1, { 'gen_ai.tool.call.result': 'a\ud800b' }), tool(2, 2, { 'gen_ai.tool.call.result': '\u{1F600}' })]))), SENDER);
    expect(plan.rejected.map((r) => [r.reason, r.span_id])).toEqual([['result_not_utf8', hexId(1, 8)]]);
    expect(plan.records.map((r) => r.bytes.toString('hex'))).toEqual([Buffer.from('\u{1F600}', 'utf8').toString('hex')]);
  });

  test('a tool call named aer1.job.close (the ledger\'s closing marker) is refused alone: reserved_tool', () => {
    const plan = planSpans(decodeProtobuf(protoRequest([tool(1, 1, { 'gen_ai.tool.name': 'aer1.job.close', 'aer1.job_id': 'job-r' }), tool(2, 2, { 'aer1.job_id': 'job-r' })])), SENDER);
    expect(plan.rejected.map((r) => [r.reason, r.job_id, r.span_id])).toEqual([['reserved_tool', 'job-r', hexId(1, 8)]]);
    expect(plan.records.map((r) => [r.kind, r.tool])).toEqual([['tool_call', 't2']]);
  });
});

describe('documented forms', () => {
  test('attributes as JSON: keys by code point at every level, int64 as strings, bytes base64, non-finite doubles as strings', () => {
    const spans = decodeJson(
      Buffer.from(
        JSON.stringify({
          resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: T1, spanId: hexId(1, 8), attributes: [
            { key: 'z', value: { intValue: '9007199254740993' } },
            { key: '\u{1F600}', value: { stringValue: 'astral' } },
            { key: '\uFFFF', value: { boolValue: false } },
            { key: 'a', value: { kvlistValue: { values: [{ key: 'y', value: { bytesValue: 'AAE=' } }, { key: 'x', value: {} }] } } },
            { key: 'm', value: { arrayValue: { values: [{ doubleValue: 0.5 }, { stringValue: 's' }] } } },
          ] }] }] }],
        }),
      ),
    );
    expect(attributesJson(spans[0].attributes)).toBe('{"a":{"x":null,"y":"AAE="},"m":[0.5,"s"],"z":"9007199254740993","\uFFFF":false,"\u{1F600}":"astral"}');
    expect(attributesJson([['d', { type: 'double', value: NaN }]])).toBe('{"d":"NaN"}');
  });

  test('span times are RFC 3339 with nine fraction digits; receipt ids are version-8 UUIDs', () => {
    expect(spanTime(1_790_000_000_123_456_789n)).toBe('2026-09-21T14:13:20.123456789Z');
    expect(spanReceiptId(SENDER, 'job-1', T1, hexId(1, 8))).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('a receipt id is SHA-256 over the sender, the job, the trace and span ids: the same span of another owner or job names another receipt', () => {
    const b = createHash('sha256').update(`aer1-otlp-span/3:${JSON.stringify([SENDER, 'job-1', T1, hexId(1, 8)])}`, 'utf8').digest();
    createHash('sha256').update(`aer1-otlp-job/3:${JSON.stringify([SENDER, 'job-1'])}`, 'utf8').digest().copy(b, 0, 0, 4);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    expect(spanReceiptId(SENDER, 'job-1', T1, hexId(1, 8)).replace(/-/g, '')).toBe(b.subarray(0, 16).toString('hex'));
    const ids = new Set([
      spanReceiptId(SENDER, 'job-1', T1, hexId(1, 8)),
      spanReceiptId('owner:evil', 'job-1', T1, hexId(1, 8)),
      spanReceiptId(SENDER, 'job-2', T1, hexId(1, 8)),
      spanReceiptId(SENDER, 'job-1', T1, hexId(2, 8)),
    ]);
    expect(ids.size).toBe(4);
    expect(spanReceiptId(SENDER, 'job-1', T1, hexId(1, 8))).toBe(spanReceiptId(SENDER, 'job-1', T1, hexId(1, 8)));
    // The receipts of one job (same sender) share their first 8 hex digits; another job's or sender's do not.
    const prefix = (id: string): string => id.slice(0, 8);
    expect(prefix(spanReceiptId(SENDER, 'job-1', T1, hexId(2, 8)))).toBe(prefix(spanReceiptId(SENDER, 'job-1', hexId(7, 16), hexId(9, 8))));
    expect(prefix(spanReceiptId(SENDER, 'job-2', T1, hexId(1, 8)))).not.toBe(prefix(spanReceiptId(SENDER, 'job-1', T1, hexId(1, 8))));
    expect(prefix(spanReceiptId('owner:evil', 'job-1', T1, hexId(1, 8)))).not.toBe(prefix(spanReceiptId(SENDER, 'job-1', T1, hexId(1, 8))));
  });
});
