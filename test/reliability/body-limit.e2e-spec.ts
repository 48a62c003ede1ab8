/**
 * Oversized bodies: 413 without reading them whole. A client declares a
 * Content-Length far above BODY_LIMIT_BYTES and sends only a little of it,
 * or streams a chunked body past the limit: the 413 must arrive while the
 * body is still incomplete, as a JSON error, with nothing recorded and the
 * server still healthy. Bodies at the limit, and compressed bodies, still work.
 */
import { request as httpRequest } from 'node:http';
import { connect, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { startApp, TestApp } from '../helpers/app';
import { call, freshReceipt, listen, withTimeout } from './helpers';

const LIMIT = 64 * 1024;

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Body bytes the client had written when the first byte of the answer arrived. */
  sentWhenAnswered: number;
}

/** Parse one HTTP/1.1 response from raw bytes (Content-Length framed); null while incomplete. */
function parseReply(buf: Buffer, sent: number): RawReply | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  const length = Number(headers['content-length'] ?? 0);
  if (buf.length - end - 4 < length) return null;
  return { status, headers, body: buf.subarray(end + 4, end + 4 + length).toString('utf8'), sentWhenAnswered: sent };
}

/**
 * Send `head` then body bytes from `source` (called until it returns null or the answer arrives),
 * waiting `pauseMs` between writes; resolves with the answer (bounded by `timeoutMs`).
 */
async function exchange(port: number, head: string, source: (sent: number) => Buffer | null, pauseMs: number, timeoutMs = 10_000): Promise<RawReply> {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined); // the server may reset the connection after answering
  let received = Buffer.alloc(0);
  let sent = 0;
  let sentAtFirstByte = -1;
  let reply: RawReply | null = null;
  socket.on('data', (d: Buffer) => {
    if (sentAtFirstByte < 0) sentAtFirstByte = sent;
    received = Buffer.concat([received, d]);
    reply ??= parseReply(received, sentAtFirstByte);
  });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(head);
  try {
    return await withTimeout(
      (async () => {
        for (let k = 0; k < 100_000 && !reply && !socket.destroyed; k++) {
          const chunk = source(sent);
          if (chunk === null) break;
          if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), sleep(200)]);
          sent += chunk.length;
          await sleep(pauseMs);
        }
        while (!reply) {
          if (socket.destroyed && !reply) throw new Error(`connection closed without an answer after ${sent} body bytes: ${received.toString('latin1').slice(0, 200)}`);
          await sleep(20);
        }
        return reply;
      })(),
      timeoutMs,
      'an answer',
    );
  } finally {
    socket.destroy();
  }
}

describe('oversized bodies (BODY_LIMIT_BYTES=65536)', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let base: string;
  let port: number;
  const head = async () => (await call(base, 'GET', '/api/ledger/head')).body;

  beforeAll(async () => {
    t = await startApp('sqlite', { BODY_LIMIT_BYTES: String(LIMIT) });
    base = await listen(t.app);
    port = Number(new URL(base).port);
  });
  afterAll(async () => {
    await t?.close();
  });

  const expect413 = (r: RawReply): void => {
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ error: 'body_too_large', message: expect.any(String) });
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers.connection).toBe('close');
  };

  it('answers a declared 100 MB body at once, after 4 KB of it, over a raw socket', async () => {
    const before = await head();
    const started = Date.now();
    const r = await exchange(
      port,
      `POST /api/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.keys.producer}\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
      (sent) => (sent < 4096 ? Buffer.alloc(1024, 0x20) : null),
      5,
    );
    expect413(r);
    expect(r.sentWhenAnswered).toBeLessThanOrEqual(4096);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await head()).toEqual(before);
  });

  it('answers before the body is complete with http.request (Content-Length 50 MB, 8 KB written, then waiting)', async () => {
    let req: ReturnType<typeof httpRequest> | undefined;
    const reply = await withTimeout(
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/jobs/job-big/entries', headers: { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024), authorization: `Bearer ${t.keys.producer}` } });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        });
        req.on('error', () => undefined); // writing after the answer may fail; the answer is what counts
        req.write(Buffer.alloc(8192, 0x5b)); // and never end()
      }),
      5000,
      'the 413 answer while the body is incomplete',
    ).finally(() => req?.destroy());
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body).error).toBe('body_too_large');
  });

  it('stops a chunked body as soon as it passes the limit', async () => {
    const before = await head();
    const chunk = Buffer.alloc(4096, 0x20);
    const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    const r = await exchange(
      port,
      `POST /api/receipts/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.keys.producer}\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n`,
      (sent) => (sent < 64 * LIMIT ? framed : null), // up to 4 MB if nobody stops it
      2,
    );
    expect413(r);
    // Answered just past the limit, long before the 4 MB the client would have sent.
    expect(r.sentWhenAnswered).toBeGreaterThan(LIMIT);
    expect(r.sentWhenAnswered).toBeLessThan(4 * LIMIT);
    expect(await head()).toEqual(before);
  });

  it('answers 413 for a complete chunked body over the limit, and 413 for one byte over by Content-Length', async () => {
    const res = await fetch(`${base}/api/receipts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.producer}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(4096).fill(0x20));
          c.close();
        },
      }),
      duplex: 'half',
      signal: AbortSignal.timeout(10_000),
    } as RequestInit & { duplex: 'half' });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe('body_too_large');
    const r = freshReceipt();
    const over = r.text + ' '.repeat(LIMIT + 1 - Buffer.byteLength(r.text));
    expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: over })).status).toBe(413);
  });

  it('accepts a body of exactly the limit, a chunked body under it, and a gzip-encoded body', async () => {
    const r = freshReceipt();
    const exact = r.text + ' '.repeat(LIMIT - Buffer.byteLength(r.text));
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    expect((await call(base, 'POST', '/api/receipts', { key: t.keys.producer, body: exact })).status).toBe(201);
    const c = freshReceipt();
    const chunked = await fetch(`${base}/api/receipts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.producer}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(ctl) {
          const b = Buffer.from(c.text);
          ctl.enqueue(new Uint8Array(b.subarray(0, 50)));
          ctl.enqueue(new Uint8Array(b.subarray(50)));
          ctl.close();
        },
      }),
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(chunked.status).toBe(201);
    const g = freshReceipt();
    const gz = await fetch(`${base}/api/receipts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.producer}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: new Uint8Array(gzipSync(g.text)),
    });
    expect(gz.status).toBe(201);
    expect(((await gz.json()) as { id: string }).id).toBe(g.id);
    // A gzip body that inflates past the limit is refused too.
    const bomb = await fetch(`${base}/api/receipts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.keys.producer}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: new Uint8Array(gzipSync(Buffer.alloc(4 * LIMIT, 0x20))),
      signal: AbortSignal.timeout(10_000),
    });
    expect(bomb.status).toBe(413);
  });

  it('answers 400 invalid_content_encoding, never 500, for bytes that do not decode under their Content-Encoding (found by a trial)', async () => {
    const r = freshReceipt();
    const gz = gzipSync(r.text);
    const cases: [string, Uint8Array][] = [
      ['gzip', new Uint8Array(Buffer.from(r.text))], // plain bytes declared gzip
      ['deflate', new Uint8Array(Buffer.from(r.text))],
      ['br', new Uint8Array(Buffer.from(r.text))],
      ['gzip', new Uint8Array(gz.subarray(0, 30))], // a truncated gzip stream
    ];
    const before = (await call(base, 'GET', '/api/ledger/head')).body;
    for (const [encoding, body] of cases) {
      for (const path of ['/api/receipts', '/api/receipts/batch']) {
        const res = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${t.keys.producer}`, 'content-type': path.endsWith('batch') ? 'application/x-ndjson' : 'application/json', 'content-encoding': encoding },
          body,
        });
        expect([encoding, path, res.status, ((await res.json()) as { error: string }).error]).toEqual([encoding, path, 400, 'invalid_content_encoding']);
      }
    }
    expect((await call(base, 'GET', '/api/ledger/head')).body).toEqual(before);
  });

  it('is still healthy, and the ledger verifies', async () => {
    expect((await call(base, 'GET', '/health')).status).toBe(200);
    expect((await call(base, 'GET', '/api/ledger/verify')).body.ok).toBe(true);
  });
});
