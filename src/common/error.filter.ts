import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badgeSvg, busyBadge } from '../core/badge';
import { isDatabaseUnavailable } from './database-unavailable';
import { ApiErrorCode, LedgerError } from './errors';
import { JSON_TYPE, pathOf } from './http';
import { ANONYMOUS_BUDGET_MESSAGE, KEY_BUDGET_MESSAGE } from './rate-limit';

/** Body of every error response. */
export interface ErrorBody {
  error: ApiErrorCode;
  message: string;
  [detail: string]: unknown;
}

/**
 * The one place typed errors become HTTP responses: a JSON body with a reason
 * code (`error`), never a stack trace. A database that does not answer is
 * 503 `database_unavailable` with Retry-After (database-unavailable.ts).
 * Unknown errors are logged and answered 500 `internal_error` without details. A badge (`/badge/...svg`) refused
 * with 429 (`server_busy`, `rate_limited`) is answered with a grey "not
 * checked now, busy" SVG, still status 429 with Retry-After, never cached
 * (`Cache-Control: no-store`), its reason code in `X-Error-Code`: image
 * clients (README badges) show it instead of a broken image.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<FastifyReply>();
    const req = host.switchToHttp().getRequest<FastifyRequest | undefined>();
    const [status, body, headers] = this.map(exception);
    if (res.sent || res.raw.headersSent) return;
    // Answered before its body was read (401/403 from the headers, 413 by length): close the connection rather than
    // read the rest of the body.
    if (req && !req.raw.complete && !Buffer.isBuffer(req.body)) res.header('Connection', 'close');
    for (const [k, v] of Object.entries(headers)) if (!(k === 'Retry-After' && (res.hasHeader(k) || res.raw.hasHeader(k)))) res.header(k, v);
    if (status === 429 && req && /^\/badge\/.*\.svg$/.test(pathOf(req))) {
      res.header('Cache-Control', 'no-store');
      res.header('X-Error-Code', body.error);
      res.header('X-Content-Type-Options', 'nosniff');
      void res.status(status).type('image/svg+xml; charset=utf-8').send(badgeSvg(busyBadge()));
      return;
    }
    void res.status(status).type(JSON_TYPE).send(body);
  }

  private map(e: unknown): [number, ErrorBody, Record<string, string>] {
    if (e instanceof LedgerError) {
      const retry = e.details.retry_after_seconds;
      return [e.status, { error: e.code, message: e.message, ...e.details }, typeof retry === 'number' ? { 'Retry-After': String(retry) } : {}];
    }
    // body-parser / raw-body errors carry `type` and `status`.
    const t = (e as { type?: unknown })?.type;
    if (t === 'entity.too.large') return [413, { error: 'body_too_large', message: 'the request body exceeds the configured limit' }, {}];
    if (t === 'request.aborted') return [400, { error: 'request_aborted', message: 'the request was aborted' }, {}];
    if (t === 'encoding.unsupported' || t === 'charset.unsupported') return [415, { error: 'unsupported_encoding', message: 'unsupported content encoding or charset' }, {}];
    if (t === 'encoding.invalid') return [400, { error: 'invalid_content_encoding', message: 'the request body does not decode under its Content-Encoding (nothing was recorded)' }, {}];
    if (typeof t === 'string' && typeof (e as { status?: unknown }).status === 'number') {
      const s = (e as { status: number }).status;
      if (s === 415) return [415, { error: 'unsupported_media_type', message: 'the Content-Type could not be read or is not one this endpoint takes' }, {}];
      if (s >= 400 && s < 500) return [s, { error: 'bad_request', message: 'the request could not be read' }, {}];
    }
    if (e instanceof HttpException) {
      const status = e.getStatus();
      const headers: Record<string, string> = {};
      if (status === 429) headers['Retry-After'] = '60';
      const code = status === 404 ? 'not_found' : status === 429 ? 'rate_limited' : status === 405 ? 'method_not_allowed' : status === 415 ? 'unsupported_media_type' : status < 500 ? 'bad_request' : 'internal_error';
      const r = e.getResponse();
      let message = typeof r === 'string' ? r : typeof (r as { message?: unknown }).message === 'string' ? (r as { message: string }).message : e.message;
      if (status === 429) message = message === KEY_BUDGET_MESSAGE ? message : ANONYMOUS_BUDGET_MESSAGE;
      else if (status === 404) message = 'no such endpoint or record';
      return [status, { error: code, message }, headers];
    }
    if (isDatabaseUnavailable(e)) {
      this.logger.error(`database unavailable: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
      return [503, { error: 'database_unavailable', message: 'the database does not answer now; nothing was recorded by this request; retry after the Retry-After seconds' }, { 'Retry-After': '5' }];
    }
    this.logger.error(e instanceof Error ? `${e.name}: ${e.message}` : 'non-error thrown', e instanceof Error ? e.stack : undefined);
    return [500, { error: 'internal_error', message: 'internal error' }, {}];
  }
}
