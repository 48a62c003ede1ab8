/**
 * The HTTP request and reply of every route (Nest on Fastify), and the few
 * answers Fastify's reply does not have built in: `Vary` appended to,
 * content negotiation on `Accept` (the `accepts` library, as Express used),
 * the request's path, and bytes with an exact Content-Type.
 */
import accepts from 'accepts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';

/** A request as the routes see it: Fastify's, with the body read by ReadBodyInterceptor (a Buffer, or undefined). */
export type HttpRequest = FastifyRequest;
/** A reply as the routes see it (Fastify's). */
export type HttpReply = FastifyReply;

/** Adds `field` to the reply's `Vary` header (once, whatever its case), as Express's `res.vary` did. */
export function vary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  const have = typeof current === 'string' ? current : Array.isArray(current) ? current.join(', ') : '';
  if (have === '*') return;
  const names = have.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (names.includes(field.toLowerCase())) return;
  reply.header('vary', have ? `${have}, ${field}` : field);
}

/** The request's path (its URL before any `?`), as received. */
export function pathOf(req: FastifyRequest): string {
  const url = req.url;
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The first of `types` the request's `Accept` header takes (Express's `req.accepts(types)`), or false. */
export function acceptsType(req: FastifyRequest, types: string[]): string | false {
  return accepts(req.raw).type(types) as string | false;
}

/** The media types written by Express's `res.type(...)` for the names this API uses, with the charset it added. */
export const HTML = 'text/html; charset=utf-8';
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Takes the raw response over from Fastify, for an answer written as it is
 * produced (streams, server-sent events): the status and the headers set on
 * the reply so far (rate-limit fields, Vary, Content-Type, ...) are moved to
 * the raw response, which Fastify then no longer touches (`reply.hijack()`).
 */
export function takeOver(reply: FastifyReply): ServerResponse {
  const raw = reply.raw;
  raw.statusCode = reply.statusCode;
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
  reply.hijack();
  return raw;
}
