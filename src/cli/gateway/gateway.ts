/**
 * `aer1 gateway`: start the proxy (see docs/gateway.md). Downstream it
 * serves the agent over Streamable HTTP (`listen`, one upstream connection
 * per MCP session) or over this process's stdin and stdout; upstream it
 * speaks Streamable HTTP to `upstream` or stdio to a command it starts.
 * When a session ends, the jobs it recorded calls in are closed (unless
 * `closeOnExit` is false or another live session records in the job).
 */
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LedgerClient, LedgerDownError } from './ledger-client';
import { GatewaySession, SessionOptions } from './session';
import { Spool } from './spool';
import { httpUpstream, RawResults, StdioUpstream } from './upstream';

export interface GatewayOptions extends SessionOptions {
  /** Ledger base URL (AER1_SERVER) and a producer key with `gateway: true` (AER1_KEY). */
  server: string;
  key: string;
  /** Streamable HTTP URL of the tool server, or the command (and arguments) that starts it over stdio. */
  upstream: { url: string; headers?: Record<string, string> } | { command: string; args: string[] };
  /** `HOST:PORT` to serve Streamable HTTP at `/mcp`; absent: serve stdio on this process's stdin/stdout. */
  listen?: string;
  /** The spool file of `--on-ledger-down queue`. */
  spool?: string;
  /** Milliseconds between deliveries of spooled receipts (default 2000). */
  retryMs?: number;
  /** Where warnings go (default stderr). */
  warn?: (line: string) => void;
  /** For `listen` over stdio in tests: the streams to serve on. */
  stdio?: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream };
}

export interface RunningGateway {
  /** `http://HOST:PORT/mcp` when serving HTTP. */
  url: string | null;
  ledger: LedgerClient;
  spool: Spool | null;
  /** Resolves when the stdio agent went away (never for HTTP). */
  done: Promise<void>;
  /** End every session (closing their jobs, see {@link SessionOptions.closeOnExit}), the spool and the HTTP server. */
  close(): Promise<void>;
}

/** `HOST:PORT` (IPv6 in brackets) as host and port; throws on anything else. */
export function parseListen(s: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(s);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new Error(`--listen must be HOST:PORT, got ${JSON.stringify(s)}`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

/** Start the gateway; see {@link GatewayOptions}. */
export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const warn = o.warn ?? ((line: string) => void process.stderr.write(line + '\n'));
  const ledger = new LedgerClient(o.server, o.key);
  const spool = o.onLedgerDown === 'queue' ? new Spool(o.spool ?? 'aer1-gateway.spool', ledger, warn) : null;
  spool?.start(o.retryMs ?? 2000);
  const sessions = new Set<GatewaySession>();
  const closing = new Set<Promise<void>>();

  /** Close the timeline of `job` (after its spooled receipts when some wait, or into the spool when the ledger is down in queue mode). */
  const closeJob = async (job: string): Promise<void> => {
    if (spool?.holds(job)) return spool.addClose(job);
    try {
      const closed = await ledger.close(job);
      if (closed) warn(`aer1 gateway: closed job ${JSON.stringify(job)} at seq ${closed.seq} (the ledger's endpoint commitment ${closed.commitment ?? 'none'})`);
    } catch (err) {
      if (err instanceof LedgerDownError && spool) return spool.addClose(job);
      warn(`aer1 gateway: job ${JSON.stringify(job)} was not closed: ${(err as Error).message} (close it with POST /api/jobs/{id}/close)`);
    }
  };
  /** A session ended: close the jobs it recorded in that no other live session records in. */
  const ended = (session: GatewaySession): void => {
    if (!sessions.delete(session) || o.closeOnExit === false) return;
    for (const job of session.jobs) {
      if ([...sessions].some((s) => s.jobs.has(job))) continue;
      const p = closeJob(job).finally(() => closing.delete(p));
      closing.add(p);
    }
  };

  const connect = async (down: Transport, sessionId: () => string): Promise<GatewaySession> => {
    const raw = new RawResults();
    const up = 'url' in o.upstream ? httpUpstream(o.upstream.url, raw, o.upstream.headers) : new StdioUpstream(o.upstream.command, o.upstream.args, raw);
    const session = new GatewaySession(down, up, raw, ledger, spool, o, sessionId, warn);
    sessions.add(session);
    // Each side's close closes the other once: a transport whose close() calls onclose again must not ping-pong
    // (that recursed until the stack overflowed when a session ended).
    let closingBoth = false;
    const closeOther = (other: { close(): Promise<void> }): void => {
      if (closingBoth) return;
      closingBoth = true;
      void other.close();
    };
    up.onclose = () => closeOther(down);
    down.onclose = () => {
      ended(session);
      closeOther(up);
    };
    await up.start();
    await down.start();
    return session;
  };

  const closeAll = async () => {
    await Promise.allSettled([...sessions].map((s) => s.close()));
    await Promise.allSettled([...closing]);
    await spool?.close();
  };

  if (o.listen === undefined) {
    const down = new StdioServerTransport((o.stdio?.stdin ?? process.stdin) as never, (o.stdio?.stdout ?? process.stdout) as never);
    const id = randomUUID();
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    await connect(down, () => id);
    const onclose = down.onclose;
    down.onclose = () => {
      onclose?.();
      finished();
    };
    (o.stdio?.stdin ?? process.stdin).once('end', () => void down.close());
    return { url: null, ledger, spool, done, close: closeAll };
  }

  const { host, port } = parseListen(o.listen);
  const byId = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'the MCP endpoint is /mcp' }));
      return;
    }
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const t = byId.get(sid);
      if (t) return t.handleRequest(req, res);
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      return;
    }
    // No session yet: a new one (the transport answers 400 when this is not an initialize request).
    const down: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void byId.set(id, down),
    });
    await connect(down, () => down.sessionId ?? 'unknown-session');
    const onclose = down.onclose;
    down.onclose = () => {
      if (down.sessionId) byId.delete(down.sessionId);
      onclose?.();
    };
    await down.handleRequest(req, res);
    if (!down.sessionId) await down.close(); // not an initialize request: nothing to keep
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      warn(`aer1 gateway: ${err.message}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'gateway error' } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/mcp`;
  return {
    url,
    ledger,
    spool,
    done: new Promise(() => undefined),
    close: async () => {
      await closeAll();
      // Sessions are closed: stop listening and drop the clients' idle keep-alive sockets now (server.close alone waits for them to time out, about 4 s).
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
