import type { NextFunction, Request, Response } from 'express';
import { LedgerMetrics } from './ledger-metrics';

/**
 * The route template a request matched (`/api/receipts/:id`, with the
 * router's mount path), or null when no route matched it. Never the URL.
 * A wildcard template (`/{*path}`: Nest registers app-wide middleware, such
 * as the request logger's, as a route on it) is no route: null too.
 */
export function routeTemplate(req: Request): string | null {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path !== 'string' || path.includes('*')) return null;
  return `${req.baseUrl ?? ''}${path}`;
}

/**
 * Express middleware (installed first, src/app.factory.ts): counts each
 * answer and its duration by method, route template and status when the
 * answer has been sent. A request whose client went away before the answer
 * ended is not counted.
 */
export function httpMetrics(metrics: LedgerMetrics): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const t0 = process.hrtime.bigint();
    res.once('finish', () => metrics.httpRequest(req.method, routeTemplate(req), res.statusCode, Number(process.hrtime.bigint() - t0) / 1e9));
    next();
  };
}
