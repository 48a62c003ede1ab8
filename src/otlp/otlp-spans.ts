/**
 * What the ledger makes of OpenTelemetry GenAI spans (docs/otlp.md). Pure:
 * decoded spans in, the tool calls and closes to record out, each with the
 * exact texts of its transport receipt (implementer's guide) and of its
 * chain entry's members (S7); the links are made by the service from the
 * stored head. Errors: 400 `otlp_attribute_type` when an attribute the
 * ledger reads has another type than documented (nothing recorded).
 */
import { BadInputError } from '../common/errors';
import { hasLoneSurrogate, identifierProblem } from '../core/text';
import { CLOSE_MARKER_TOOL } from '../core/coverage/types';
import { sha256, sha256Hex, type JsonObject } from '../core/aer1';
import { AttrValue, OtlpSpan, STATUS_ERROR } from './otlp-decode';

/** The attributes the ledger reads, and the one type each must have. */
export const ATTR = {
  operation: 'gen_ai.operation.name',
  tool: 'gen_ai.tool.name',
  job: 'aer1.job_id',
  conversation: 'gen_ai.conversation.id',
  result: 'gen_ai.tool.call.result',
  close: 'aer1.job.close',
} as const;
const STRING_ATTRS = [ATTR.operation, ATTR.tool, ATTR.job, ATTR.conversation, ATTR.result];

/** The `gen_ai.operation.name` of an agent span: it closes the jobs of the tool calls it encloses. */
export const INVOKE_AGENT = 'invoke_agent';

/**
 * One span the ledger records: a tool call (`execute_tool`) or the close of
 * a job (`invoke_agent`; tool {@link CLOSE_MARKER_TOOL}, written as the
 * ledger's closing marker only when no tool call of its job in the same
 * request can carry the close).
 */
export interface SpanRecord {
  span: OtlpSpan;
  kind: 'tool_call' | 'agent_close';
  job_id: string;
  tool: string;
  /** The canonical bytes: the result as sent, or the attributes as JSON ({@link attributesJson}). */
  bytes: Buffer;
  result_captured: boolean;
  /** `ok`, or `error` for a span whose status is ERROR. */
  status: 'ok' | 'error';
  /** This entry closes the job's timeline. */
  close: boolean;
  /** The receipt's id: a UUID derived from the sender's owner, the job and the trace and span ids ({@link spanReceiptId}). */
  receipt_id: string;
}

/** A span refused in `partial_success`: its ids, its name and why (a reason code). */
export interface SpanRejection {
  trace_id: string;
  span_id: string;
  name: string;
  job_id: string | null;
  reason: string;
  message: string;
}

/** The plan for one request, spans in start order. */
export interface SpanPlan {
  records: SpanRecord[];
  rejected: SpanRejection[];
  /** Spans that are neither tool calls nor a close: not recorded, counted. */
  not_recorded: number;
}

/**
 * Plan a request sent by a key of `sender` ({@link senderOf}): every
 * `execute_tool` span is a tool call of the job `aer1.job_id`, else
 * `gen_ai.conversation.id`, else the trace id (hex), in span start order
 * (ties: the order of the request); `aer1.job.close = true` closes its job
 * with that entry; an `invoke_agent` span closes the jobs of the tool calls
 * it encloses in this request, and its own job (the same rule) when it names
 * one or is a root span (records of tool {@link CLOSE_MARKER_TOOL}, after
 * the tool calls). Refused alone, by name: a job id that is empty or not an
 * identifier (`invalid_job_id`; the attribute that names it is used even
 * when empty), a tool call whose tool is the reserved
 * {@link CLOSE_MARKER_TOOL} (`reserved_tool`), a result that is not Unicode
 * text (`result_not_utf8`). 400 `otlp_attribute_type` for an attribute of
 * another type than documented, in any span.
 */
export function planSpans(spans: readonly OtlpSpan[], sender: string): SpanPlan {
  spans.forEach(checkTypes);
  // Stable: spans that start at the same time keep the order of the request.
  const ordered = [...spans].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const records: SpanRecord[] = [];
  const rejected: SpanRejection[] = [];
  let notRecorded = 0;
  const agents: OtlpSpan[] = [];
  const byId = new Map(spans.map((s) => [s.trace_id + s.span_id, s]));
  // The spans of a request mostly share one job: its id is checked once (jobIdProblem is pure).
  const problems = new Map<string, string | null>();
  const jobIdProblemOnce = (job: string): string | null => {
    let p = problems.get(job);
    if (p === undefined) problems.set(job, (p = jobIdProblem(job)));
    return p;
  };
  for (const s of ordered) {
    const op = str(s, ATTR.operation);
    if (op === INVOKE_AGENT) agents.push(s);
    if (op !== 'execute_tool') {
      if (op !== INVOKE_AGENT) notRecorded++;
      continue;
    }
    const job = jobIdOf(s);
    const tool = str(s, ATTR.tool);
    const problem = jobIdProblemOnce(job);
    if (problem) {
      rejected.push(reject(s, null, 'invalid_job_id', `${spanLabel(s)}: job id ${JSON.stringify(job)} (from ${jobSource(s)}): ${problem}; the span was not recorded`));
      continue;
    }
    if (tool === undefined || tool.length === 0) {
      rejected.push(reject(s, job, 'missing_tool_name', `${spanLabel(s)} of job ${JSON.stringify(job)}: an execute_tool span needs a non-empty ${ATTR.tool}; the span was not recorded`));
      continue;
    }
    if (tool === CLOSE_MARKER_TOOL) {
      rejected.push(reject(s, job, 'reserved_tool', `${spanLabel(s)} of job ${JSON.stringify(job)}: the tool ${JSON.stringify(CLOSE_MARKER_TOOL)} is reserved for the ledger's closing marker; close with ${ATTR.close} = true or an invoke_agent span; the span was not recorded`));
      continue;
    }
    const result = s.attributes.get(ATTR.result);
    if (result?.type === 'string' && (result.not_utf8 === true || hasLoneSurrogate(result.value))) {
      const what = result.not_utf8 ? 'bytes that are not UTF-8 (protobuf)' : 'an unpaired UTF-16 surrogate (OTLP/JSON \\uD800-\\uDFFF escape)';
      rejected.push(reject(s, job, 'result_not_utf8', `${spanLabel(s)} of job ${JSON.stringify(job)}: ${ATTR.result} holds ${what}: its bytes cannot be recorded as sent; the span was not recorded`));
      continue;
    }
    records.push(record(s, 'tool_call', job, tool, s.attributes.get(ATTR.close)?.type === 'bool' && (s.attributes.get(ATTR.close) as { value: boolean }).value, sender));
  }
  // Each agent span closes after every tool call of its jobs in this request.
  for (const a of agents) {
    const jobs = new Set(records.filter((r) => r.kind === 'tool_call' && encloses(a, r.span, byId)).map((r) => r.job_id));
    const own = jobIdOf(a);
    if ((a.parent_span_id === null || str(a, ATTR.job) !== undefined || str(a, ATTR.conversation) !== undefined) && jobIdProblemOnce(own) === null) jobs.add(own);
    if (jobs.size === 0) notRecorded++;
    for (const job of jobs) records.push(record(a, 'agent_close', job, CLOSE_MARKER_TOOL, true, sender));
  }
  return { records, rejected, not_recorded: notRecorded };
}

/** The job a span belongs to: `aer1.job_id`, else `gen_ai.conversation.id`, else its trace id (hex). */
export function jobIdOf(s: OtlpSpan): string {
  return str(s, ATTR.job) ?? str(s, ATTR.conversation) ?? s.trace_id;
}

/** Which attribute named a span's job (for messages). */
function jobSource(s: OtlpSpan): string {
  return str(s, ATTR.job) !== undefined ? ATTR.job : str(s, ATTR.conversation) !== undefined ? ATTR.conversation : 'the trace id';
}

/**
 * Why `job` cannot name a job, or null: empty, or not an identifier
 * ({@link identifierProblem}: controls, invisible characters, odd spaces,
 * not NFC, too long).
 */
export function jobIdProblem(job: string): string | null {
  if (job.length === 0) return 'a job id must not be empty';
  return identifierProblem(ATTR.job, job)?.message ?? null;
}

/**
 * Whose spans these are, as their receipt ids name it: `owner:<owner>` for a
 * key with an owner (its owner's keys share their spans), else
 * `key:<key id>` (the key alone).
 */
export function senderOf(by: { owner: string | null; key_id: string }): string {
  return by.owner !== null ? `owner:${by.owner}` : `key:${by.key_id}`;
}

/** `agent` is an ancestor of `s` (same trace, through parents sent in this request). */
function encloses(agent: OtlpSpan, s: OtlpSpan, byId: Map<string, OtlpSpan>): boolean {
  let p = s.parent_span_id;
  for (let hops = 0; p !== null && hops < 1000; hops++) {
    if (s.trace_id === agent.trace_id && p === agent.span_id) return true;
    p = byId.get(s.trace_id + p)?.parent_span_id ?? null;
  }
  return false;
}

function record(s: OtlpSpan, kind: SpanRecord['kind'], job: string, tool: string, close: boolean, sender: string): SpanRecord {
  const result = kind === 'tool_call' ? str(s, ATTR.result) : undefined;
  return {
    span: s,
    kind,
    job_id: job,
    tool,
    bytes: result !== undefined ? Buffer.from(result, 'utf8') : Buffer.from(attributesJson(s.attributes), 'utf8'),
    result_captured: result !== undefined,
    status: s.status_code === STATUS_ERROR ? 'error' : 'ok',
    close,
    receipt_id: spanReceiptId(sender, job, s.trace_id, s.span_id),
  };
}

/** How a message names a span: `span <trace id>/<span id> ("<name>")`, as the service's refusals do. */
export function spanLabel(s: Pick<OtlpSpan, 'trace_id' | 'span_id' | 'name'>): string {
  return `span ${s.trace_id}/${s.span_id} (${JSON.stringify(s.name)})`;
}

function reject(s: OtlpSpan, job: string | null, reason: string, message: string): SpanRejection {
  return { trace_id: s.trace_id, span_id: s.span_id, name: s.name, job_id: job, reason, message };
}

function str(s: OtlpSpan, key: string): string | undefined {
  const v = s.attributes.get(key);
  return v?.type === 'string' ? v.value : undefined;
}

function checkTypes(s: OtlpSpan, index: number): void {
  const wrong = (key: string, want: string, v: AttrValue): never => {
    throw new BadInputError('otlp_attribute_type', `span ${index + 1} (${JSON.stringify(s.name)}, trace ${s.trace_id}, span ${s.span_id}): attribute ${key} must be ${want}, not ${v.type}; nothing was recorded`, {
      trace_id: s.trace_id,
      span_id: s.span_id,
      attribute: key,
      type: v.type,
    });
  };
  for (const key of STRING_ATTRS) {
    const v = s.attributes.get(key);
    if (v !== undefined && v.type !== 'string') wrong(key, 'a string', v);
  }
  const c = s.attributes.get(ATTR.close);
  if (c !== undefined && c.type !== 'bool') wrong(ATTR.close, 'a boolean', c);
}

/**
 * A span's receipt id: a UUID (version 8, RFC 9562) whose first 4 bytes are
 * the first 4 bytes of SHA-256 over the UTF-8 of `aer1-otlp-job/3:` followed
 * by the JSON array `[sender, job id]`, and whose other 12 bytes are bytes 4
 * to 15 of SHA-256 over the UTF-8 of `aer1-otlp-span/3:` followed by the JSON
 * array `[sender, job id, trace id hex, span id hex]` (JSON.stringify, no
 * white space; `sender` from {@link senderOf}; version and variant bits set).
 * The same span sent again by the same owner for the same job names the
 * same receipt; a key of another owner, or another job, names another. The
 * receipts of one job share their first 8 hex digits, so a request's
 * receipts sit together in every index keyed by receipt id (a span then
 * touches a few index pages, not one page of each index per span).
 */
export function spanReceiptId(sender: string, jobId: string, traceId: string, spanId: string): string {
  const b = sha256(`aer1-otlp-span/3:${JSON.stringify([sender, jobId, traceId, spanId])}`).subarray(0, 16);
  sha256(`aer1-otlp-job/3:${JSON.stringify([sender, jobId])}`).copy(b, 0, 0, 4);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * A span's attributes as JSON (docs/otlp.md): an object whose members are
 * the attribute keys sorted by Unicode code point (a key sent twice: the
 * last value), no white space; strings and booleans as JSON; 64-bit
 * integers as decimal strings; doubles as JSON numbers (NaN and infinities
 * as the strings "NaN", "Infinity", "-Infinity"); bytes as base64 strings;
 * arrays as arrays; key-value lists as objects, sorted the same way; an
 * empty value as null.
 */
export function attributesJson(attrs: Map<string, AttrValue> | [string, AttrValue][]): string {
  const entries = [...(attrs instanceof Map ? attrs : new Map(attrs))].sort(([a], [b]) => byCodePoint(a, b));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${valueJson(v)}`).join(',')}}`;
}

function valueJson(v: AttrValue): string {
  switch (v.type) {
    case 'string': return JSON.stringify(v.value);
    case 'bool': return v.value ? 'true' : 'false';
    case 'int': return JSON.stringify(v.value);
    case 'double': return Number.isFinite(v.value) ? JSON.stringify(v.value) : JSON.stringify(String(v.value));
    case 'bytes': return JSON.stringify(v.value.toString('base64'));
    case 'array': return `[${v.value.map(valueJson).join(',')}]`;
    case 'kvlist': return attributesJson(v.value);
    case 'empty': return 'null';
  }
}

/** Compare by Unicode code point (not UTF-16 code unit). */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** RFC 3339 UTC time of a span time in nanoseconds since the epoch, with all nine fraction digits. */
export function spanTime(nanos: bigint): string {
  const ms = nanos / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  return `${iso.slice(0, 19)}.${(nanos % 1_000_000_000n).toString().padStart(9, '0')}Z`;
}

/** The receipt's provenance: `OBSERVED VIA GATEWAY` for a key with `gateway: true`, else `LOGGED BY AGENT` (S5). */
export function provenanceOf(by: { gateway: boolean }): 'OBSERVED VIA GATEWAY' | 'LOGGED BY AGENT' {
  return by.gateway ? 'OBSERVED VIA GATEWAY' : 'LOGGED BY AGENT';
}

/**
 * The exact text of a record's transport receipt (implementer's guide):
 * members in this order, no white space; `output_hash` over the canonical
 * bytes; `tool_context` names the span. It is JSON.stringify of
 * {@link receiptDocument}.
 */
export function receiptText(r: SpanRecord, provenance: string): string {
  return JSON.stringify(receiptDocument(r, provenance));
}

/**
 * The transport receipt of a record as a value: strings, booleans, a
 * non-negative integer and one nested object, no member undefined, so
 * parsing its text ({@link receiptText}) gives back an equal value (the
 * service verifies this value instead of parsing the text it just wrote).
 */
export function receiptDocument(r: SpanRecord, provenance: string): JsonObject {
  const hex = sha256Hex(r.bytes);
  const context: JsonObject = { source: 'otlp', trace_id: r.span.trace_id, span_id: r.span.span_id, span_name: r.span.name, ended_at: spanTime(r.span.end) };
  if (r.status === 'error' && r.span.status_message !== '') context.error_message = r.span.status_message;
  return {
    id: r.receipt_id,
    tool: r.tool,
    timestamp: spanTime(r.span.start),
    tool_context: context,
    provenance_class: provenance,
    canonical_bytes: r.bytes.toString('base64'),
    canonical_byte_length: r.bytes.length,
    hash_algorithm: 'sha256',
    output_hash: `sha256:${hex}`,
    verification_status: provenance === 'OBSERVED VIA GATEWAY' ? 'execution_observed' : 'agent_reported',
    status: r.status,
    result_captured: r.result_captured,
  };
}
