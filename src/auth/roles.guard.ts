import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { LedgerError } from '../common/errors';
import { ApiKeysService, Principal, Role } from './api-keys.service';

const ROLES_KEY = 'aer1:roles';

/** Marks a write endpoint: callers need an API key with one of `roles` (admin always passes). */
export const Roles = (...roles: Role[]): MethodDecorator & ClassDecorator => SetMetadata(ROLES_KEY, roles);

/** Reads are public; endpoints marked with {@link Roles} need a key of a listed role (401/403 otherwise). */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const roles = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, [ctx.getHandler(), ctx.getClass()]);
    if (!roles || roles.length === 0) return true;
    const req = ctx.switchToHttp().getRequest<FastifyRequest & { principal?: Principal }>();
    // Authenticated earlier in this request by the read-budget guard (keyed reads), else here: one key read per request.
    const principal = req.principal ?? (await this.keys.fromHeader(req.headers.authorization)) ?? (await this.keys.authenticate(undefined));
    if (principal.role !== 'admin' && !roles.includes(principal.role)) {
      throw new LedgerError(403, 'forbidden_role', `this endpoint needs role ${roles.join(' or ')}; the key has role ${principal.role}`);
    }
    req.principal = principal;
    return true;
  }
}
