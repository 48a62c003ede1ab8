/**
 * The queue dashboard (Bull Board) at `/queues`, for the auditor and admin
 * roles, when the queue runs on Redis. Browsers authenticate with HTTP Basic
 * (any user name, the API key as password); scripts may send
 * `Authorization: Bearer <key>`. The key is checked like every other key
 * (hashed look-up, revocation) and never logged.
 */
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { BullBoardModule } from '@bull-board/nestjs';
import { DynamicModule } from '@nestjs/common';
import type { onRequestHookHandler } from 'fastify';
import type { ApiKeysService } from '../auth/api-keys.service';
import { LedgerError } from '../common/errors';
import { pathOf } from '../common/http';
import { VERIFICATION_QUEUE } from './queue-options';

const ROLES = new Set(['auditor', 'admin']);

/** The key from `Authorization: Bearer <key>` or `Basic base64(user:key)`, or undefined. */
export function dashboardKey(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

/**
 * A Fastify `onRequest` hook in front of the dashboard (`/queues` and
 * everything under it, the dashboard's own API included): 401 (with a Basic
 * challenge) or 403, as JSON; added for every route by src/app.factory.ts
 * when the queue runs on Redis.
 */
export function dashboardAuth(keys: ApiKeysService): onRequestHookHandler {
  return (req, reply, done) => {
    const path = pathOf(req).toLowerCase();
    if (path !== '/queues' && !path.startsWith('/queues/')) return done();
    keys
      .authenticate(dashboardKey(req.headers.authorization))
      .then((p) => {
        if (!ROLES.has(p.role)) throw new LedgerError(403, 'forbidden_role', `the queue dashboard needs role auditor or admin; the key has role ${p.role}`);
        done();
      })
      .catch((e: unknown) => {
        const err = e instanceof LedgerError ? e : new LedgerError(401, 'invalid_key', 'the API key is not known');
        if (err.status === 401) reply.header('WWW-Authenticate', 'Basic realm="aer1 queues", charset="UTF-8"');
        void reply.status(err.status).send({ error: err.code, message: err.message });
      });
  };
}

/** Modules that mount the dashboard at /queues over the verification queue. */
export function queueDashboardModules(): DynamicModule[] {
  return [
    // Keys are checked by dashboardAuth, a hook on every route (src/app.factory.ts): Nest's middleware on Fastify
    // would cover /queues but not the dashboard's own routes under it.
    BullBoardModule.forRoot({
      route: '/queues',
      adapter: FastifyAdapter,
      middleware: (_req: unknown, _res: unknown, next: () => void) => next(),
      // hideRedisDetails: the Redis server's version, kernel, memory and clients are no business of an auditor
      // (GET /queues/api/redis/stats answers 403).
      boardOptions: { uiConfig: { hideRedisDetails: true } },
    }),
    // Read-only: emptying or cleaning the queue from a browser could strand a batch's chunks.
    BullBoardModule.forFeature({ name: VERIFICATION_QUEUE, adapter: BullMQAdapter, options: { readOnlyMode: true } }),
  ];
}
