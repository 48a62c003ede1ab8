/**
 * HTTP hardening applied to every route (API, pages, /docs, /queues):
 * security headers (helmet, built once), one answer for repeated query parameters,
 * JSON bodies for the errors Node's HTTP parser answers itself (431, 400,
 * 408), and the server's header and request timeouts.
 */
import type { FastifyReply, FastifyRequest, FastifyServerOptions, onRequestHookHandler } from 'fastify';
import helmet, { HelmetOptions } from 'helmet';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** Headers must arrive within this many milliseconds (slow-header clients are cut off with 408). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request (headers and body) must arrive within this many milliseconds (408 beyond). */
export const REQUEST_TIMEOUT_MS = 60_000;

/**
 * helmet's options, with a Content-Security-Policy that fits the HTML served outside
 * the public pages: Swagger UI at /docs and Bull Board at /queues load their
 * scripts from this origin and use inline styles. The public pages set a
 * stricter policy of their own (no scripts at all). Every answer gets
 * `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
 * `X-Frame-Options: DENY` and `frame-ancestors 'none'`.
 */
export function securityHeaders(): HelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'script-src-attr': ["'none'"],
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:'],
        'font-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'self'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  };
}

/**
 * helmet as a Fastify `onRequest` hook on every request (unknown routes
 * too), built once: @fastify/helmet builds helmet's middlewares (and parses
 * the CSP) again on every request, about 40 us of a single POST's CPU
 * (bench/PROFILE.md); the headers are the same.
 */
export function securityHeaderHook(): onRequestHookHandler {
  const headers = helmet(securityHeaders());
  return (req, reply, done) => headers(req.raw, reply.raw, () => done());
}

/** The only repeatable query parameters, by path: `GET /api/ledger/stream-heads?stream=a&stream=b` (its controller reads them with URLSearchParams.getAll). */
export const REPEATABLE_QUERY: Readonly<Record<string, readonly string[]>> = { '/api/ledger/stream-heads': ['stream'] };

/**
 * 400 `repeated_parameter` when a query parameter appears more than once
 * (`?job_id=a&job_id=b`): every endpoint takes one value per parameter, and
 * an array where a string is expected must never reach a query. The
 * exceptions are {@link REPEATABLE_QUERY}. 400 `bad_request` when the query
 * does not percent-decode as UTF-8 (`?job_id=%ED%A0%80`): the parser would
 * put U+FFFD in its place and answer for another value, where the same bytes
 * in a path are refused (see {@link frameworkErrors}).
 */
export function rejectRepeatedQuery(): onRequestHookHandler {
  return (req: FastifyRequest, reply: FastifyReply, next: () => void): void => {
    const url = req.url;
    const q = url.indexOf('?');
    if (q < 0) return next();
    if (url.includes('%', q)) {
      try {
        decodeURIComponent(url.slice(q + 1));
      } catch {
        void reply.status(400).send({ error: 'bad_request', message: 'a query parameter of the request URL does not decode (malformed percent-encoding or not UTF-8)' });
        return;
      }
    }
    const seen = new Set<string>();
    const repeatable = REPEATABLE_QUERY[url.slice(0, q)] ?? [];
    for (const name of new URLSearchParams(url.slice(q + 1)).keys()) {
      if (seen.has(name) && !repeatable.includes(name)) {
        void reply.status(400).send({ error: 'repeated_parameter', message: `query parameter ${JSON.stringify(name.slice(0, 100))} is given more than once; give it once`, parameter: name.slice(0, 100) });
        return;
      }
      seen.add(name);
    }
    next();
  };
}

/**
 * Fastify's answer to the errors it meets before routing (its
 * `frameworkErrors`): a path parameter that does not percent-decode
 * (`/api/receipts/%ED%A0%80x`) is 400 `bad_request`, as every other refusal,
 * with the same security headers (the hooks that set them have not run).
 */
export function frameworkErrors(): NonNullable<FastifyServerOptions['frameworkErrors']> {
  const headers = helmet(securityHeaders());
  return (error, req, reply) => {
    const message = error.code === 'FST_ERR_BAD_URL' ? 'a path parameter of the request URL does not decode (malformed percent-encoding)' : 'the request could not be read';
    headers(req.raw, reply.raw, () => void (reply as FastifyReply).status(400).send({ error: 'bad_request', message }));
  };
}

const PARSER_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'the request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'the request did not arrive in time'],
};

/**
 * Timeouts and the server's own error answers: Node answers a malformed
 * request or oversized headers before any handler runs; these answers carry
 * the same JSON error body as the rest of the API.
 */
export function hardenServer(server: Server): void {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  // How often Node checks those two timeouts (read when the server starts listening; Node's default is 30 s).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 1_000;
  server.removeAllListeners('clientError');
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // As Node's own handler: never write over an answer already under way.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) return void socket.destroy();
    const [status, error, message] = PARSER_ERRORS[err.code ?? ''] ?? [400, 'bad_request', 'the request could not be parsed'];
    const body = JSON.stringify({ error, message });
    const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
