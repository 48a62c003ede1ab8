/**
 * publishToRelay (src/log/nostr-relay-client.ts) against hostile relays, the
 * cases an attack on the Nostr publisher found (issue 33): a relay that never
 * finishes the handshake (its socket was kept open for good), an OK without a
 * message (threw, and the publisher looped every second), an OK whose third
 * member is truthy but not `true` (counted as accepted), an OK for another
 * event, a NOTICE carrying line breaks and escape codes (printed raw to
 * stdout), and a relay that answers HTTP instead of a WebSocket handshake.
 */
import { createServer, Server, Socket } from 'node:net';
import { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { MAX_RELAY_TEXT, publishToRelay } from '../../src/log/nostr-relay-client';

const EVENT = { id: 'a'.repeat(64), kind: 1, content: 'checkpoint' };

/** A WebSocket relay on 127.0.0.1 that answers each EVENT with `answer(event id)` (frames sent in order); its open sockets counted. */
async function fakeRelay(answer: (id: string) => unknown[][]): Promise<{ url: string; open: () => number; close: () => Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as [string, { id: string }];
      if (msg[0] === 'EVENT') for (const frame of answer(msg[1].id)) ws.send(JSON.stringify(frame));
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    open: () => [...wss.clients].filter((c) => c.readyState === WebSocket.OPEN).length,
    close: () => new Promise<void>((r) => wss.close(() => r())),
  };
}

/** A TCP server that accepts and never answers (a stalled handshake); its live sockets counted. */
async function silentServer(): Promise<{ url: string; live: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    s.resume(); // reads (and drops) what the client sends, so it sees the client's end
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    live: () => sockets.size,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 200));

describe('publishing an anchor to a relay (NIP-01 EVENT / OK)', () => {
  it('OK true with a message: accepted, the message kept; the socket is closed afterwards', async () => {
    const relay = await fakeRelay((id) => [['OK', id, true, 'duplicate: already have it']]);
    expect(await publishToRelay(relay.url, EVENT, 2000)).toEqual({ ok: true, message: 'duplicate: already have it', notices: [] });
    await settle();
    expect(relay.open()).toBe(0);
    await relay.close();
  });

  it('OK true without a message: accepted, message empty (no exception)', async () => {
    const relay = await fakeRelay((id) => [['OK', id, true]]);
    expect(await publishToRelay(relay.url, EVENT, 2000)).toEqual({ ok: true, message: '', notices: [] });
    await relay.close();
  });

  it('OK whose third member is truthy but not true ("true", 1): not accepted, and said why', async () => {
    for (const flag of ['true', 1]) {
      const relay = await fakeRelay((id) => [['OK', id, flag, 'x']]);
      expect(await publishToRelay(relay.url, EVENT, 2000)).toEqual({ ok: false, message: `not accepted: OK's third member is ${JSON.stringify(flag)}, not true`, notices: [] });
      await relay.close();
    }
  });

  it('OK false: refused with the relay\'s message (cut to 500 characters)', async () => {
    const relay = await fakeRelay((id) => [['OK', id, false, `blocked: ${'z'.repeat(2000)}`]]);
    const a = await publishToRelay(relay.url, EVENT, 2000);
    expect([a.ok, a.message.length, a.message.startsWith('blocked: zzz')]).toEqual([false, MAX_RELAY_TEXT, true]);
    await relay.close();
  });

  it('an OK for another event, and NOTICEs with line breaks and escape codes: no acceptance; the notices returned as data, nothing printed', async () => {
    const notice = 'x\n{"level":50,"msg":"FAKE: admin key leaked"}\n\u001b[2J\u001b[31mRED';
    const relay = await fakeRelay(() => [['NOTICE', notice], ['OK', 'b'.repeat(64), true, '']]);
    const printed = jest.spyOn(process.stdout, 'write');
    const debug = jest.spyOn(console, 'debug');
    const a = await publishToRelay(relay.url, EVENT, 800);
    expect(a).toEqual({ ok: false, message: 'no OK within 800 ms', notices: [notice] });
    expect(printed).not.toHaveBeenCalled();
    expect(debug).not.toHaveBeenCalled();
    printed.mockRestore();
    debug.mockRestore();
    await relay.close();
  });

  it('a relay that never finishes the handshake: not accepted, and its socket is closed (was: one socket leaked per attempt)', async () => {
    const silent = await silentServer();
    for (let i = 0; i < 3; i++) {
      const a = await publishToRelay(silent.url, EVENT, 300);
      expect(a.ok).toBe(false);
      expect(a.message).toMatch(/no OK within 300 ms|Opening handshake has timed out/);
    }
    await settle();
    expect(silent.live()).toBe(0);
    await silent.close();
  });

  it('an HTTP answer instead of a WebSocket handshake, and nothing listening: not accepted, with the reason', async () => {
    const http = createServer((s) => s.resume().end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n'));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
    const port = (http.address() as AddressInfo).port;
    expect(await publishToRelay(`ws://127.0.0.1:${port}`, EVENT, 2000)).toEqual({ ok: false, message: 'the relay answered HTTP 403 instead of a WebSocket handshake', notices: [] });
    await new Promise<void>((r) => http.close(() => r()));
    const refused = await publishToRelay(`ws://127.0.0.1:${port}`, EVENT, 2000);
    expect(refused.ok).toBe(false);
    expect(refused.message).toMatch(/ECONNREFUSED/);
  });
});
