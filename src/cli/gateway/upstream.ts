/**
 * The upstream side: the SDK's Streamable HTTP client transport with a
 * fetch that keeps the exact text of every response as it arrives, or a
 * stdio client transport that starts the tool server and keeps each line.
 * Either way {@link RawResults} holds, per JSON-RPC id, the exact text of
 * the `result` (or `error`) member before the SDK parses the message: the
 * bytes a receipt commits to.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { rawMember, splitJsonArray } from '../../core/json';

/** The key of a JSON-RPC id in maps (a number and a string of the same digits are different ids). */
export const idKey = (id: unknown): string => JSON.stringify(id);

/** Exact member texts of responses, by id, until taken. */
export class RawResults {
  private readonly byId = new Map<string, { member: 'result' | 'error'; text: string }>();

  /** Keep the `result`/`error` member texts of the message (or batch) in `text`; text that is not JSON is left to the SDK to refuse. */
  capture(text: string): void {
    const trimmed = text.trim();
    const items = trimmed.startsWith('[') ? splitJsonArray(trimmed) : [trimmed];
    for (const item of items ?? []) {
      let id: unknown;
      try {
        id = (JSON.parse(item) as { id?: unknown }).id;
      } catch {
        continue;
      }
      if (id === undefined || id === null) continue;
      const result = rawMember(item, 'result');
      const error = result === null ? rawMember(item, 'error') : null;
      if (result !== null) this.byId.set(idKey(id), { member: 'result', text: result });
      else if (error !== null) this.byId.set(idKey(id), { member: 'error', text: error });
    }
  }

  /** The captured member of the response with `id`, removed from the map. */
  take(id: unknown): { member: 'result' | 'error'; text: string } | undefined {
    const k = idKey(id);
    const v = this.byId.get(k);
    this.byId.delete(k);
    return v;
  }
}

/** Server-sent events: calls `onData` with each event's data (its `data:` lines joined by LF) before passing the bytes on. */
export function sseTap(onData: (data: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let data: string[] = [];
  const lines = (final: boolean) => {
    for (;;) {
      const m = /\r\n|\n|\r/.exec(buffer);
      if (!m || (!final && m[0] === '\r' && m.index === buffer.length - 1)) return; // a lone CR at the end may be half a CRLF
      const line = buffer.slice(0, m.index);
      buffer = buffer.slice(m.index + m[0].length);
      if (line === '') {
        if (data.length > 0) onData(data.join('\n'));
        data = [];
      } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      lines(false);
      controller.enqueue(chunk);
    },
    flush() {
      buffer += decoder.decode();
      lines(true);
    },
  });
}

/** A fetch that lets `raw` see every JSON and event-stream response body before the SDK reads it. */
export function capturingFetch(raw: RawResults, extraHeaders: Record<string, string> = {}): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries(extraHeaders)) headers.set(k, v);
    const res = await fetch(url, { ...init, headers });
    const type = (res.headers.get('content-type') ?? '').toLowerCase();
    if (!res.ok || res.body === null) return res;
    const init2 = { status: res.status, statusText: res.statusText, headers: res.headers };
    if (type.startsWith('application/json')) {
      const text = await res.text();
      raw.capture(text);
      return new Response(text, init2);
    }
    if (type.startsWith('text/event-stream')) return new Response(res.body.pipeThrough(sseTap((d) => raw.capture(d))), init2);
    return res;
  };
}

/** The SDK's Streamable HTTP client transport to `url`, capturing into `raw`, sending `headers` (e.g. the tool server's Authorization) on every request. */
export function httpUpstream(url: string, raw: RawResults, headers: Record<string, string> = {}): Transport {
  return new StreamableHTTPClientTransport(new URL(url), { fetch: capturingFetch(raw, headers) });
}

/**
 * A tool server started as a child process, spoken to over its stdin and
 * stdout (newline-delimited JSON-RPC, as MCP's stdio transport), with this
 * process's environment (what the MCP client gave the gateway is what it
 * would have given the tool server) except AER1_KEY, which stays here. Its
 * stderr is ours.
 */
export class StdioUpstream implements Transport {
  private child: ChildProcess | null = null;
  private pending: Buffer = Buffer.alloc(0);
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  constructor(
    private readonly command: string,
    private readonly args: string[],
    private readonly raw: RawResults,
  ) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const { AER1_KEY: _key, ...env } = process.env;
      const child = spawn(this.command, this.args, { env, stdio: ['pipe', 'pipe', 'inherit'], shell: false, windowsHide: true });
      this.child = child;
      child.on('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.child = null;
        this.onclose?.();
      });
      child.stdin!.on('error', (err) => this.onerror?.(err));
      child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    });
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    for (let nl = this.pending.indexOf(0x0a); nl >= 0; nl = this.pending.indexOf(0x0a)) {
      const line = this.pending.toString('utf8', 0, nl).replace(/\r$/, '');
      this.pending = this.pending.subarray(nl + 1);
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = JSONRPCMessageSchema.parse(JSON.parse(line));
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      this.raw.capture(line);
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.child?.stdin) return reject(new Error('the tool server is not running'));
      this.child.stdin.write(JSON.stringify(message) + '\n', (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.stdin?.end();
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const timer = setTimeout(() => child.kill('SIGTERM'), 2000);
    await exited;
    clearTimeout(timer);
  }
}
