/**
 * Request logging: pino-http over the raw request and response (a Fastify
 * `onRequest` hook, src/app.factory.ts), over the one pino logger that nestjs-pino also hands to Nest (app logs). nestjs-pino's own
 * request middleware is not used: it keeps each request's logger in an
 * AsyncLocalStorage, which turns on promise hooks for every promise the
 * request creates (measured: 22% of a single POST's CPU). App logs written
 * while a request runs therefore carry no request id; the request's own log
 * line (method, URL, status, time) does.
 */
import type { onRequestHookHandler } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { Logger } from 'pino';
import { pinoHttp, Options } from 'pino-http';

/** Headers never written to the log (credentials, whichever header a client or proxy puts them in). */
export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["proxy-authorization"]', 'req.headers["x-api-key"]', 'res.headers["set-cookie"]'];

/**
 * The pino-http options for nestjs-pino's `pinoHttp` parameter: one logger
 * at `level` (pino level name), the secret headers redacted, and whether
 * each finished request is logged.
 */
export function requestLogOptions(level: string, autoLogging: boolean): Options & { logger: Logger } {
  return { logger: pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }), autoLogging };
}

/**
 * The request-logging middleware over the logger and options nestjs-pino was
 * given (its PARAMS_PROVIDER_TOKEN value), or null when the logger would
 * write no request line: pino-http logs each finished request at `info`, and
 * below that level it would still serialize every request for nothing.
 */
export function requestLogging(params: { pinoHttp?: unknown }): ((req: IncomingMessage, res: ServerResponse, next: () => void) => void) | null {
  const options = params.pinoHttp as Options & { logger: Logger };
  if (!options.autoLogging || !options.logger.isLevelEnabled('info')) return null;
  return pinoHttp(options);
}

/** {@link requestLogging} as a Fastify `onRequest` hook over the raw request and response, or null when it would write nothing. */
export function requestLogHook(params: { pinoHttp?: unknown }): onRequestHookHandler | null {
  const log = requestLogging(params);
  if (!log) return null;
  return (req, reply, done) => log(req.raw, reply.raw, () => done());
}
