/**
 * Request logging (src/common/request-log.ts): one line per finished request
 * at `info`, secrets redacted; no middleware at all when the level would
 * write no request line (pino-http would still serialize every request).
 */
import { Writable } from 'node:stream';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { REDACTED_PATHS, requestLogging, requestLogOptions } from '../../src/common/request-log';

describe('request logging', () => {
  it('is installed only when its lines would be written', () => {
    expect(requestLogging({ pinoHttp: requestLogOptions('info', true) })).toBeInstanceOf(Function);
    expect(requestLogging({ pinoHttp: requestLogOptions('debug', true) })).toBeInstanceOf(Function);
    expect(requestLogging({ pinoHttp: requestLogOptions('warn', true) })).toBeNull();
    expect(requestLogging({ pinoHttp: requestLogOptions('silent', true) })).toBeNull();
    expect(requestLogging({ pinoHttp: requestLogOptions('info', false) })).toBeNull();
  });

  it('writes one line per request with method, URL and status, and every credential header redacted', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString('utf8')), done()) });
    const logger = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
    const mw = requestLogging({ pinoHttp: { logger, autoLogging: true } })!;
    const server = createServer((req, res) => mw(req as never, res as never, () => void res.writeHead(204).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const secret = 'aer1_' + 'S'.repeat(43);
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/receipts?x=1`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'proxy-authorization': `Basic ${secret}`, 'x-api-key': secret, cookie: `s=${secret}` },
      });
      expect(r.status).toBe(204);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as { req: { method: string; url: string; headers: Record<string, string> }; res: { statusCode: number }; msg: string };
    expect([line.req.method, line.req.url, line.res.statusCode, line.msg]).toEqual(['POST', '/api/receipts?x=1', 204, 'request completed']);
    for (const h of ['authorization', 'proxy-authorization', 'x-api-key', 'cookie']) expect(line.req.headers[h]).toBe('[redacted]');
    expect(lines[0].includes(secret.slice(5))).toBe(false);
  });
});
