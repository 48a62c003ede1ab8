/**
 * OTLP/JSON requests for the reliability suites that post spans
 * (otlp-under-attack, packs-under-attack): one span with the GenAI
 * attributes the ledger reads, and the request around a list of them.
 */
import { randomBytes } from 'node:crypto';

export const hex = (n: number): string => randomBytes(n).toString('hex');

export type Attr = { key: string; value: Record<string, unknown> };
export interface SpanOpts {
  trace?: string;
  span?: string;
  parent?: string;
  name?: string;
  op?: string | null;
  tool?: string | null;
  job?: string;
  conversation?: string;
  result?: string;
  close?: boolean;
  start?: string;
  end?: string;
  extra?: Attr[];
}

/** One OTLP/JSON span. */
export function span(o: SpanOpts = {}): Record<string, unknown> {
  const attrs: Attr[] = [];
  const s = (key: string, v: string): Attr => ({ key, value: { stringValue: v } });
  if (o.op !== null) attrs.push(s('gen_ai.operation.name', o.op ?? 'execute_tool'));
  if (o.tool !== null) attrs.push(s('gen_ai.tool.name', o.tool ?? 'search'));
  if (o.job !== undefined) attrs.push(s('aer1.job_id', o.job));
  if (o.conversation !== undefined) attrs.push(s('gen_ai.conversation.id', o.conversation));
  if (o.result !== undefined) attrs.push(s('gen_ai.tool.call.result', o.result));
  if (o.close !== undefined) attrs.push({ key: 'aer1.job.close', value: { boolValue: o.close } });
  const out: Record<string, unknown> = {
    traceId: o.trace ?? hex(16),
    spanId: o.span ?? hex(8),
    name: o.name ?? 'execute_tool search',
    startTimeUnixNano: o.start ?? '1790000000000000000',
    endTimeUnixNano: o.end ?? '1790000000500000000',
    attributes: [...attrs, ...(o.extra ?? [])],
  };
  if (o.parent) out.parentSpanId = o.parent;
  return out;
}
export const request = (spans: Record<string, unknown>[]): string => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
