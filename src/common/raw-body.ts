import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { raw } from 'body-parser';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { from, Observable, switchMap } from 'rxjs';

/** An error the ErrorFilter maps by its `type` and `status`, like body-parser's own errors. */
function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, type, expose: true });
}

/** A raw request, with the body {@link rawBody} read (a Buffer) once it has. */
type BodyRequest = IncomingMessage & { body?: unknown };
/** The callback of {@link rawBody}: no argument once the body is read (or there is none), the error otherwise. */
type Next = (err?: unknown) => void;
/** {@link rawBody}'s reader. */
export type BodyReader = (req: BodyRequest, res: ServerResponse, next: Next) => void;

/**
 * Fastify reads no body itself: every content type goes to one parser that
 * leaves the stream unread, so that {@link ReadBodyInterceptor} reads it
 * after the guards (and Fastify answers no 415 for a type it does not know:
 * the routes decide).
 */
export function deferBodies(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_req: FastifyRequest, _payload: IncomingMessage, done: (err: Error | null, body?: unknown) => void) => done(null, undefined));
}

/**
 * Request bodies read raw, byte for byte, into `req.body` (a Buffer), at
 * most `limit` bytes. A body over the limit is refused at once: by its
 * Content-Length before any of it is read, or, for a chunked body, as soon as
 * it passes the limit. The 413 goes out with `Connection: close` and the rest
 * of the body is never read. (express.raw reads an oversized body to its end
 * before answering, so a client that declares a huge length and sends slowly
 * holds the request open.) Bodies with a Content-Encoding are inflated by
 * body-parser's raw reader (what express.raw is), with the same limit; bytes that do not decode under
 * their declared encoding (zlib or brotli errors, a truncated stream) are a
 * 400 `invalid_content_encoding`, not a server error.
 */
export function rawBody(limit: number): BodyReader {
  const inflating = raw({ type: () => true, limit });
  return (req: BodyRequest, res: ServerResponse, next: Next): void => {
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity') {
      return void inflating(req, res, (err?: unknown) => {
        // body-parser's own errors carry a `type` (entity.too.large, encoding.unsupported, ...);
        // a decompressor's error (zlib, brotli) reaches here with a status but no type.
        const type = (err as { type?: unknown } | undefined)?.type;
        if (err !== undefined && err !== null && typeof type !== 'string') return next(bodyError(400, 'encoding.invalid', 'the request body does not decode under its Content-Encoding'));
        next(err);
      });
    }
    const declared = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && declared === undefined) return next();
    const tooLarge = (): void => {
      res.setHeader('Connection', 'close');
      next(bodyError(413, 'entity.too.large', 'request entity too large'));
    };
    if (declared !== undefined && Number(declared) > limit) {
      req.pause();
      return tooLarge();
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
      req.off('close', onClose);
    };
    const settle = (then: () => void): void => {
      if (settled) return;
      settled = true;
      cleanup();
      then();
    };
    function onData(chunk: Buffer): void {
      received += chunk.length;
      if (received > limit) {
        req.pause();
        chunks.length = 0;
        settle(tooLarge);
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      settle(() => {
        req.body = Buffer.concat(chunks, received);
        next();
      });
    }
    function onAborted(): void {
      settle(() => next(bodyError(400, 'request.aborted', 'request aborted')));
    }
    function onClose(): void {
      if (!req.complete) onAborted();
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onAborted);
    req.on('close', onClose);
  };
}

/**
 * Reads the body with {@link rawBody} after the guards ran, so a request that
 * needs a key is answered 401/403 from its headers alone, before any of its
 * body is read (the ErrorFilter closes such a connection: the unread body is
 * never buffered). Routes that take no body never read one.
 */
@Injectable()
export class ReadBodyInterceptor implements NestInterceptor {
  private readonly read: BodyReader;

  constructor(limit: number) {
    this.read = rawBody(limit);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const res = http.getResponse<FastifyReply>();
    if (Buffer.isBuffer(req.body) || req.raw.readableEnded) return next.handle();
    const raw: BodyRequest = req.raw;
    const done = new Promise<void>((resolve, reject) =>
      this.read(raw, res.raw, (err?: unknown) => {
        if (err) return reject(err as Error);
        req.body = raw.body;
        resolve();
      }),
    );
    return from(done).pipe(switchMap(() => next.handle()));
  }
}
