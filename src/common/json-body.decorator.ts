import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { BadInputError } from './errors';
import { parseRequestJson, RawJson } from './raw-json';

/**
 * The request body as received: bodies are read raw (never parsed by a
 * general JSON middleware), checked as strict UTF-8, and parsed here, so the
 * exact text is kept for storage. Injects a {@link RawJson}.
 */
export const JsonBody = createParamDecorator((_: unknown, ctx: ExecutionContext): RawJson => {
  const req = ctx.switchToHttp().getRequest<FastifyRequest>();
  const body: unknown = req.body;
  if (!Buffer.isBuffer(body) || body.length === 0) throw new BadInputError('empty_body', 'a JSON request body is required');
  return parseRequestJson(body);
});

/** The raw body bytes (for NDJSON endpoints). */
export const RawBody = createParamDecorator((_: unknown, ctx: ExecutionContext): Buffer => {
  const req = ctx.switchToHttp().getRequest<FastifyRequest>();
  const body: unknown = req.body;
  if (!Buffer.isBuffer(body) || body.length === 0) throw new BadInputError('empty_body', 'a request body is required');
  return body;
});
