/*
 * An agent instrumented with the OpenTelemetry JavaScript SDK, exporting its
 * spans with the SDK's own OTLP/HTTP exporter (protobuf or JSON) the way a
 * platform would: an invoke_agent span enclosing a chat span and one
 * execute_tool span per call (GenAI semantic conventions). Run by
 * test/e2e/otlp.e2e-spec.ts in a process of its own (the exporters load
 * `http` with a dynamic import, which jest's module sandbox refuses).
 *
 *   node instrumented-agent.cjs '{"url":..., "key":..., "protocol":"protobuf"|"json",
 *     "agent":{"conversation"?, "jobId"?, "calls":[{"tool","result"?,"error"?}], "close"?: true}, "sends"?: 1}'
 *
 * Prints one JSON line: {"results":[{"code":0}|{"code":1,"error":"..."}...], "spans":[{trace,span,parent,name,start,end,attributes}]}
 * (times in nanoseconds since the epoch, decimal strings).
 */
'use strict';
const { context, trace, SpanStatusCode } = require('@opentelemetry/api');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');

const opts = JSON.parse(process.argv[2]);
const { OTLPTraceExporter } = opts.protocol === 'json' ? require('@opentelemetry/exporter-trace-otlp-http') : require('@opentelemetry/exporter-trace-otlp-proto');

const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'otlp-e2e-agent' }), spanProcessors: [new SimpleSpanProcessor(memory)] });
const tracer = provider.getTracer('agent');
const ids = {};
if (opts.agent.conversation) ids['gen_ai.conversation.id'] = opts.agent.conversation;
if (opts.agent.jobId) ids['aer1.job_id'] = opts.agent.jobId;
const agent = tracer.startSpan('invoke_agent planner', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner', ...ids } });
const ctx = trace.setSpan(context.active(), agent);
tracer.startSpan('chat gpt', { attributes: { 'gen_ai.operation.name': 'chat' } }, ctx).end();
for (const c of opts.agent.calls) {
  const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': c.tool, ...ids };
  if (c.result !== undefined) attributes['gen_ai.tool.call.result'] = c.result;
  const s = tracer.startSpan(`execute_tool ${c.tool}`, { attributes }, ctx);
  if (c.error) s.setStatus({ code: SpanStatusCode.ERROR, message: c.error });
  s.end();
}
if (opts.agent.close !== false) agent.end();
const spans = memory.getFinishedSpans();

const exporter = new OTLPTraceExporter({ url: opts.url, headers: { Authorization: `Bearer ${opts.key}` } });
const send = () => new Promise((resolve) => exporter.export(spans, (r) => resolve(r.error ? { code: r.code, error: String(r.error.message) } : { code: r.code })));

/** An SDK time [seconds, nanoseconds] as a decimal string of nanoseconds. */
const nanos = ([sec, ns]) => (BigInt(sec) * 1000000000n + BigInt(ns)).toString();

(async () => {
  const results = [];
  for (let k = 0; k < (opts.sends ?? 1); k++) results.push(await send());
  await exporter.shutdown();
  const described = spans.map((s) => ({ trace: s.spanContext().traceId, span: s.spanContext().spanId, parent: s.parentSpanContext ? s.parentSpanContext.spanId : null, name: s.name, start: nanos(s.startTime), end: nanos(s.endTime), attributes: s.attributes }));
  process.stdout.write(`${JSON.stringify({ results, spans: described })}\n`);
})();
