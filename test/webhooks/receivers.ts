/** Webhook receivers on 127.0.0.1 for the delivery tests: each request recorded; answered fast, with an error, dripped or not at all. */
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * `fast`: 200 at once; `error`: 503 at once; `drip`: 200 headers, then one
 * byte a second, never ending; `silent`: never answers.
 */
export type Mode = 'fast' | 'error' | 'drip' | 'silent';

export class TestReceiver {
  readonly got: Received[] = [];
  /** Requests whose answer has not ended. */
  open = 0;
  /** How to answer: one mode for every path, or per path. */
  mode: Mode | ((path: string) => Mode) = 'fast';
  private server: Server | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  url = '';

  /** Listen on 127.0.0.1 (`port` 0: any free port; a given port: the same address as before a restart). */
  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        this.got.push({ path: req.url ?? '', headers: req.headers, body, at: Date.now() });
        const mode = typeof this.mode === 'function' ? this.mode(req.url ?? '') : this.mode;
        if (mode === 'fast' || mode === 'error') {
          res.writeHead(mode === 'fast' ? 200 : 503).end();
          return;
        }
        this.open++;
        res.on('close', () => this.open--);
        if (mode === 'silent') return;
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.flushHeaders();
        const t = setInterval(() => res.write('x'), 1000);
        this.timers.add(t);
        res.on('close', () => {
          clearInterval(t);
          this.timers.delete(t);
        });
      });
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  at(path: string): Received[] {
    return this.got.filter((r) => r.path === path);
  }

  async until(pred: () => boolean, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`receiver: condition not met within ${ms} ms (${this.got.length} requests)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
