import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal } from './api-keys.service';

/**
 * The authenticated caller of an endpoint marked with `@Roles` (set by the
 * RolesGuard). Throws if used on an endpoint without `@Roles`: a programming
 * error, never a client's.
 */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const req = ctx.switchToHttp().getRequest<FastifyRequest & { principal?: Principal }>();
  if (!req.principal) throw new Error('@Caller() used on an endpoint without @Roles');
  return req.principal;
});
