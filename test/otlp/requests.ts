/**
 * OTLP trace requests for tests, built with the OpenTelemetry project's
 * generated protobuf definitions (protobuf) and by the OTLP/JSON mapping.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const Response = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

/** One span: ids as hex, times in ms after a fixed epoch, attributes typed by their JS type (integers as intValue). */
export interface SpanSpec {
  trace: string;
  span: string;
  parent?: string;
  name: string;
  start: number;
  end?: number;
  /** Exact times in nanoseconds since the epoch (decimal), instead of `start` / `end`. */
  startNano?: string;
  endNano?: string;
  attrs: Record<string, string | number | boolean>;
  error?: string;
}

const EPOCH_NS = 1_790_000_000_000n * 1_000_000n;

/** A hex id of `bytes` bytes made from a small number. */
export const hexId = (n: number, bytes: number): string => n.toString(16).padStart(bytes * 2, '0');

function anyValue(v: string | number | boolean): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: v } : { doubleValue: v };
}

function jsonSpan(s: SpanSpec): Record<string, unknown> {
  return {
    traceId: s.trace,
    spanId: s.span,
    ...(s.parent ? { parentSpanId: s.parent } : {}),
    name: s.name,
    kind: 1,
    startTimeUnixNano: s.startNano ?? String(EPOCH_NS + BigInt(s.start) * 1_000_000n),
    endTimeUnixNano: s.endNano ?? String(EPOCH_NS + BigInt(s.end ?? s.start + 1) * 1_000_000n),
    attributes: Object.entries(s.attrs).map(([key, value]) => ({ key, value: anyValue(value) })),
    status: s.error !== undefined ? { code: 2, message: s.error } : {},
  };
}

/** The OTLP/JSON request text. */
export function jsonRequest(specs: SpanSpec[]): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'test-agent' } }] }, scopeSpans: [{ scope: { name: 't' }, spans: specs.map(jsonSpan) }] }] });
}

/** The protobuf request bytes. */
export function protoRequest(specs: SpanSpec[]): Buffer {
  const spans = specs.map((s) => {
    const j = jsonSpan(s);
    return {
      ...j,
      traceId: Buffer.from(s.trace, 'hex'),
      spanId: Buffer.from(s.span, 'hex'),
      parentSpanId: s.parent ? Buffer.from(s.parent, 'hex') : undefined,
    };
  });
  const msg = Request.fromObject({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
  return Buffer.from(Request.encode(msg).finish());
}

/** A protobuf ExportTraceServiceResponse read back: rejected spans and message. */
export function readProtoResponse(body: Buffer): { rejected: number; message: string } {
  const o = Response.toObject(Response.decode(body), { longs: Number, defaults: true });
  return { rejected: o.partialSuccess?.rejectedSpans ?? 0, message: o.partialSuccess?.errorMessage ?? '' };
}
