/**
 * For the gateway's tests and bench: an MCP tool server over Streamable
 * HTTP (the SDK's server, one transport per session), and an SDK client over
 * in-process streams for the gateway's stdio side, keeping every line it
 * receives (the JSON-RPC responses as the agent saw them).
 */
import { randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildServer } = require('./mcp-tool-server.js') as { buildServer: (onCall?: (name: string) => void) => { connect(t: Transport): Promise<void> } };

export const TOOL_SERVER_SCRIPT = require.resolve('./mcp-tool-server.js');

/** The tool server over Streamable HTTP at `url`; `calls` counts the tool calls it ran. */
export async function startToolServer(): Promise<{ url: string; calls: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server: Server = createServer((req, res) => {
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (known) return void known.handleRequest(req, res);
    const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, t) });
    void buildServer((name) => calls.push(name))
      .connect(t)
      .then(() => t.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    calls,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A client transport over two in-process streams (newline-delimited JSON-RPC), keeping every line received. */
export class StreamClientTransport implements Transport {
  readonly toServer = new PassThrough();
  readonly fromServer = new PassThrough();
  readonly lines: string[] = [];
  private buffer = '';
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8');
      for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.lines.push(line);
        this.onmessage?.(JSONRPCMessageSchema.parse(JSON.parse(line)));
      }
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(JSON.stringify(message) + '\n');
  }

  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

/** A fetch for the SDK's HTTP client that keeps every response body (JSON, or each event's data) as received. */
export function recordingFetch(texts: string[]): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const res = await fetch(url, init);
    const type = res.headers.get('content-type') ?? '';
    if (init?.method !== 'POST' || !res.ok || res.body === null || !(type.startsWith('application/json') || type.startsWith('text/event-stream'))) return res;
    if (type.startsWith('application/json')) {
      const text = await res.text();
      texts.push(text);
      return new Response(text, { status: res.status, headers: res.headers });
    }
    // Short-lived POST streams in these tests: read all, keep each event's data, hand the same bytes on.
    const text = await res.text();
    for (const block of text.split(/\n\n/)) {
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
      if (data.length > 0) texts.push(data.join('\n'));
    }
    return new Response(text, { status: res.status, headers: res.headers });
  };
}
