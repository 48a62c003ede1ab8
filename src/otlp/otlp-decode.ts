/**
 * OTLP/HTTP trace requests (`ExportTraceServiceRequest`) read into plain
 * spans: protobuf through the OpenTelemetry project's own generated
 * definitions (@opentelemetry/otlp-transformer, protobufjs), JSON as the
 * OTLP/JSON mapping writes it (lowerCamelCase members, hex trace and span
 * ids, 64-bit integers as decimal strings or numbers). No protobuf is
 * decoded by hand. Errors: 400 `otlp_decode_failed` naming what did not
 * decode; 413 `too_many_spans` beyond {@link OTLP_MAX_SPANS}.
 */
import { isUtf8 } from 'node:buffer';
import { createRequire } from 'node:module';
import { BadInputError, LedgerError } from '../common/errors';
import { parseRequestJson } from '../common/raw-json';

const GENERATED = '@opentelemetry/otlp-transformer/build/src/generated/root';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require(GENERATED) as GeneratedRoot;
const collector = root.opentelemetry.proto.collector.trace.v1;
/** The protobufjs runtime the generated definitions were built on (its Reader is the one their decode accepts). */
const protobuf = createRequire(require.resolve(GENERATED))('protobufjs/minimal') as { Reader: { create(b: Uint8Array): PbReader } };

/**
 * Marks a protobuf `string` whose bytes are not UTF-8: a lone low surrogate,
 * which no UTF-8 decoding yields, put before the lossy decoding (U+FFFD for
 * each bad sequence) by {@link strictReader}. Read off by {@link pbText} and
 * {@link pbValue}.
 */
const NOT_UTF8 = '\udc80';

/** Spans one request may carry (all resource and scope groups together); more is 413 `too_many_spans`, nothing recorded. */
export const OTLP_MAX_SPANS = 10_000;

/**
 * An attribute value as sent (OTLP `AnyValue`), its type kept: `string` is
 * the only type the ledger reads its own attributes in. `not_utf8`: a
 * protobuf string whose bytes are not UTF-8 (`value` is then their lossy
 * decoding, U+FFFD for each bad sequence, not what was sent).
 */
export type AttrValue =
  | { type: 'string'; value: string; not_utf8?: true }
  | { type: 'bool'; value: boolean }
  | { type: 'int'; value: string }
  | { type: 'double'; value: number }
  | { type: 'bytes'; value: Buffer }
  | { type: 'array'; value: AttrValue[] }
  | { type: 'kvlist'; value: [string, AttrValue][] }
  | { type: 'empty' };

/** Span status codes (OTLP `Status.StatusCode`). */
export const STATUS_ERROR = 2;

/** One span of a request, as much of it as the ledger reads. */
export interface OtlpSpan {
  /** 32 lowercase hex digits. */
  trace_id: string;
  /** 16 lowercase hex digits. */
  span_id: string;
  /** 16 lowercase hex digits, or null for a root span. */
  parent_span_id: string | null;
  name: string;
  /** Nanoseconds since the Unix epoch. */
  start: bigint;
  end: bigint;
  /** 0 unset, 1 ok, 2 error. */
  status_code: number;
  status_message: string;
  /** The span's attributes in the order sent (a key sent twice: the last one). */
  attributes: Map<string, AttrValue>;
}

/** The answer body (`ExportTraceServiceResponse`), protobuf-encoded. */
export function encodeResponse(rejected: number, message: string): Buffer {
  const body = rejected > 0 || message !== '' ? { partialSuccess: { rejectedSpans: rejected, errorMessage: message } } : {};
  return Buffer.from(collector.ExportTraceServiceResponse.encode(body).finish());
}

/** Decode a protobuf `ExportTraceServiceRequest`. */
export function decodeProtobuf(body: Buffer): OtlpSpan[] {
  let req: PbRequest;
  try {
    req = collector.ExportTraceServiceRequest.decode(strictReader(body));
  } catch (e) {
    throw new BadInputError('otlp_decode_failed', `the body is not a protobuf ExportTraceServiceRequest (${(e as Error).message}); nothing was recorded`);
  }
  countSpans((req.resourceSpans ?? []).flatMap((r) => (r.scopeSpans ?? []).map((s) => (s.spans ?? []).length)));
  const out: OtlpSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const where = `span ${out.length + 1}`;
        out.push({
          trace_id: pbId(s.traceId, 16, where, 'traceId'),
          span_id: pbId(s.spanId, 8, where, 'spanId'),
          parent_span_id: s.parentSpanId && s.parentSpanId.length > 0 ? pbId(s.parentSpanId, 8, where, 'parentSpanId') : null,
          name: pbText(s.name),
          start: pbNanos(s.startTimeUnixNano),
          end: pbNanos(s.endTimeUnixNano),
          status_code: s.status?.code ?? 0,
          status_message: pbText(s.status?.message),
          attributes: new Map((s.attributes ?? []).map((kv) => [pbText(kv.key), pbValue(kv.value)])),
        });
      }
    }
  }
  return out;
}

/**
 * A protobuf 64-bit integer as protobufjs gives it (a `Long`, or a number)
 * as a bigint: `BigInt(String(v))` (0 when absent), without the decimal
 * string for a Long (its two 32-bit halves, taken as unsigned or signed as
 * the Long says).
 */
export function pbNanos(v: unknown): bigint {
  if (typeof v === 'object' && v !== null && (v as { __isLong__?: unknown }).__isLong__ === true) {
    const l = v as { low: number; high: number; unsigned: boolean };
    const u = (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
    return l.unsigned ? u : BigInt.asIntN(64, u);
  }
  return BigInt(String(v ?? 0));
}

function pbId(bytes: Uint8Array | null | undefined, length: number, where: string, field: string): string {
  if (!bytes || bytes.length !== length) throw new BadInputError('otlp_decode_failed', `${where}: ${field} must be ${length} bytes; nothing was recorded`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * A protobufjs reader over `body` whose `string` fields keep whether their
 * bytes are UTF-8: bytes that are not come back as {@link NOT_UTF8} and the
 * lossy decoding (protobufjs alone decodes them lossy and says nothing).
 */
function strictReader(body: Buffer): PbReader {
  const reader = protobuf.Reader.create(body);
  reader.string = function string(this: PbReader): string {
    const b = this.bytes();
    const text = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
    return isUtf8(b) ? text : NOT_UTF8 + text;
  };
  return reader;
}

/** A protobuf string field the ledger only shows (span name, status message, attribute key): bytes that are not UTF-8 as their lossy decoding. */
function pbText(s: string | null | undefined): string {
  return s?.startsWith(NOT_UTF8) ? s.slice(NOT_UTF8.length) : (s ?? '');
}

function pbValue(v: PbAnyValue | null | undefined): AttrValue {
  switch (v?.value) {
    case 'stringValue': return v.stringValue!.startsWith(NOT_UTF8) ? { type: 'string', value: v.stringValue!.slice(NOT_UTF8.length), not_utf8: true } : { type: 'string', value: v.stringValue! };
    case 'boolValue': return { type: 'bool', value: v.boolValue! };
    case 'intValue': return { type: 'int', value: String(v.intValue) };
    case 'doubleValue': return { type: 'double', value: v.doubleValue! };
    case 'bytesValue': return { type: 'bytes', value: Buffer.from(v.bytesValue!) };
    case 'arrayValue': return { type: 'array', value: (v.arrayValue!.values ?? []).map(pbValue) };
    case 'kvlistValue': return { type: 'kvlist', value: (v.kvlistValue!.values ?? []).map((kv) => [pbText(kv.key), pbValue(kv.value)]) };
    default: return { type: 'empty' };
  }
}

/** Decode an OTLP/JSON `ExportTraceServiceRequest` (strict JSON: duplicate members, bad UTF-8 and depth are refused as elsewhere). */
export function decodeJson(body: Buffer): OtlpSpan[] {
  const doc = parseRequestJson(body).value;
  const bad = (what: string): never => {
    throw new BadInputError('otlp_decode_failed', `the body is not an OTLP/JSON ExportTraceServiceRequest: ${what}; nothing was recorded`);
  };
  const list = (v: unknown, what: string): Record<string, unknown>[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every(isRecord)) return bad(`${what} must be an array of objects`);
    return v;
  };
  if (!isRecord(doc)) return bad('the document must be an object');
  const groups = list(doc.resourceSpans, 'resourceSpans').map((rs, i) => list(rs.scopeSpans, `resourceSpans[${i}].scopeSpans`).map((ss, j) => list(ss.spans, `resourceSpans[${i}].scopeSpans[${j}].spans`)));
  countSpans(groups.flat().map((s) => s.length));
  const out: OtlpSpan[] = [];
  for (const s of groups.flat(2)) {
    const where = `span ${out.length + 1}`;
    const status = s.status === undefined || s.status === null ? {} : isRecord(s.status) ? s.status : bad(`${where}: status must be an object`);
    const parent = s.parentSpanId === undefined || s.parentSpanId === null || s.parentSpanId === '' ? null : hexId(s.parentSpanId, 8, where, 'parentSpanId', bad);
    out.push({
      trace_id: hexId(s.traceId, 16, where, 'traceId', bad),
      span_id: hexId(s.spanId, 8, where, 'spanId', bad),
      parent_span_id: parent,
      name: s.name === undefined ? '' : typeof s.name === 'string' ? s.name : bad(`${where}: name must be a string`),
      start: nanos(s.startTimeUnixNano, where, 'startTimeUnixNano', bad),
      end: nanos(s.endTimeUnixNano, where, 'endTimeUnixNano', bad),
      status_code: statusCode(status.code, where, bad),
      status_message: status.message === undefined ? '' : typeof status.message === 'string' ? status.message : bad(`${where}: status.message must be a string`),
      attributes: new Map(list(s.attributes, `${where} attributes`).map((kv) => [typeof kv.key === 'string' ? kv.key : bad(`${where}: an attribute key must be a string`), jsonValue(kv.value, `${where} attribute ${JSON.stringify(kv.key)}`, bad)])),
    });
  }
  return out;
}

function jsonValue(v: unknown, where: string, bad: (what: string) => never): AttrValue {
  if (v === undefined || v === null) return { type: 'empty' };
  if (!isRecord(v)) return bad(`${where}: the value must be an AnyValue object`);
  const keys = Object.keys(v);
  if (keys.length === 0) return { type: 'empty' };
  if (keys.length > 1) return bad(`${where}: an AnyValue sets one member, not ${keys.join(', ')}`);
  const x = v[keys[0]];
  switch (keys[0]) {
    case 'stringValue': return typeof x === 'string' ? { type: 'string', value: x } : bad(`${where}: stringValue must be a string`);
    case 'boolValue': return typeof x === 'boolean' ? { type: 'bool', value: x } : bad(`${where}: boolValue must be true or false`);
    case 'intValue': return { type: 'int', value: int64(x) ?? bad(`${where}: intValue must be a 64-bit integer`) };
    case 'doubleValue': return typeof x === 'number' ? { type: 'double', value: x } : bad(`${where}: doubleValue must be a number`);
    case 'bytesValue':
      return typeof x === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(x) && x.length % 4 === 0 ? { type: 'bytes', value: Buffer.from(x, 'base64') } : bad(`${where}: bytesValue must be base64`);
    case 'arrayValue': {
      const values = isRecord(x) && (x.values === undefined || Array.isArray(x.values)) ? ((x.values as unknown[] | undefined) ?? []) : bad(`${where}: arrayValue must be {values: [...]}`);
      return { type: 'array', value: values.map((e, k) => jsonValue(e, `${where}[${k}]`, bad)) };
    }
    case 'kvlistValue': {
      const values = isRecord(x) && (x.values === undefined || Array.isArray(x.values)) ? ((x.values as unknown[] | undefined) ?? []) : bad(`${where}: kvlistValue must be {values: [...]}`);
      return {
        type: 'kvlist',
        value: values.map((kv) => (isRecord(kv) && typeof kv.key === 'string' ? [kv.key, jsonValue(kv.value, `${where}.${kv.key}`, bad)] : bad(`${where}: kvlistValue entries are {key, value}`))),
      };
    }
    default:
      return bad(`${where}: unknown AnyValue member ${JSON.stringify(keys[0])}`);
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A 64-bit integer as a decimal string (from a JSON integer or a decimal string), or null. */
function int64(x: unknown): string | null {
  const text = typeof x === 'number' && Number.isSafeInteger(x) ? String(x) : typeof x === 'string' && /^-?(0|[1-9][0-9]{0,19})$/.test(x) ? x : null;
  if (text === null) return null;
  const n = BigInt(text);
  return n >= INT64_MIN && n <= INT64_MAX ? n.toString() : null;
}

function nanos(x: unknown, where: string, field: string, bad: (what: string) => never): bigint {
  if (x === undefined) return 0n;
  const t = int64(x);
  if (t === null || t.startsWith('-')) return bad(`${where}: ${field} must be an unsigned 64-bit integer (nanoseconds)`);
  return BigInt(t);
}

function statusCode(x: unknown, where: string, bad: (what: string) => never): number {
  if (x === undefined) return 0;
  const names: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };
  if (typeof x === 'string' && x in names) return names[x];
  if (x === 0 || x === 1 || x === 2) return x;
  return bad(`${where}: status.code must be 0, 1 or 2`);
}

function hexId(x: unknown, bytes: number, where: string, field: string, bad: (what: string) => never): string {
  if (typeof x !== 'string' || !new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(x)) return bad(`${where}: ${field} must be ${bytes * 2} hex digits`);
  return x.toLowerCase();
}

function countSpans(counts: number[]): void {
  const n = counts.reduce((a, b) => a + b, 0);
  if (n > OTLP_MAX_SPANS) {
    throw new LedgerError(413, 'too_many_spans', `the request carries ${n} spans; at most ${OTLP_MAX_SPANS} are taken in one request (send smaller batches: OTEL_BSP_MAX_EXPORT_BATCH_SIZE); nothing was recorded`, { spans: n, limit: OTLP_MAX_SPANS });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/* The generated definitions' shapes, as far as they are read here. */
interface PbReader {
  bytes(): Uint8Array;
  string(): string;
}
interface PbAnyValue {
  value?: string;
  stringValue?: string | null;
  boolValue?: boolean | null;
  intValue?: unknown;
  doubleValue?: number | null;
  bytesValue?: Uint8Array | null;
  arrayValue?: { values?: PbAnyValue[] | null } | null;
  kvlistValue?: { values?: { key?: string | null; value?: PbAnyValue | null }[] | null } | null;
}
interface PbSpan {
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  parentSpanId?: Uint8Array | null;
  name?: string | null;
  startTimeUnixNano?: unknown;
  endTimeUnixNano?: unknown;
  attributes?: { key?: string | null; value?: PbAnyValue | null }[] | null;
  status?: { code?: number | null; message?: string | null } | null;
}
interface PbRequest {
  resourceSpans?: { scopeSpans?: { spans?: PbSpan[] | null }[] | null }[] | null;
}
interface GeneratedRoot {
  opentelemetry: {
    proto: {
      collector: {
        trace: {
          v1: {
            ExportTraceServiceRequest: { decode(reader: PbReader): PbRequest };
            ExportTraceServiceResponse: { encode(message: object): { finish(): Uint8Array } };
          };
        };
      };
    };
  };
}
