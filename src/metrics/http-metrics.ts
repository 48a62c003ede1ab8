import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LedgerMetrics } from './ledger-metrics';

/**
 * The route template a request matched (`/api/receipts/:id`), or null when
 * no route matched it. Never the URL. A wildcard template (`/*`, `/queues/*`)
 * is no route: null too.
 */
export function routeTemplate(req: FastifyRequest): string | null {
  const path = req.routeOptions.url;
  if (typeof path !== 'string' || path.includes('*')) return null;
  return path;
}

/**
 * A Fastify hook (added first, src/app.factory.ts): counts each answer and
 * its duration by method, route template and status when the answer has
 * been sent ('finish' on the raw response, streamed answers included). A
 * request whose client went away before the answer ended is not counted.
 */
export function httpMetrics(fastify: FastifyInstance, metrics: LedgerMetrics): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    const t0 = process.hrtime.bigint();
    reply.raw.once('finish', () => metrics.httpRequest(req.method, routeTemplate(req), reply.raw.statusCode, Number(process.hrtime.bigint() - t0) / 1e9));
    done();
  });
}
