/** submitToWitness against answers a real witness would not give, and parseListen. */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { cosignCheckpoint, generateSignerKey, parseAddCheckpointRequest, parseNote, parseVerifierKey, SIG_COSIGNATURE_V1 } from '../../src/core/tlog';
import { MAX_WITNESS_RESPONSE, submitToWitness } from '../../src/witness/client';
import { parseListen } from '../../src/witness/server';
import { TestLog } from './helpers';

const log = new TestLog('log.example/client-unit');
log.grow(3);
const witness = generateSignerKey('witness.test/fake', SIG_COSIGNATURE_V1);

describe('submitToWitness (fake witness)', () => {
  let server: Server;
  let url: string;
  let answer: (req: IncomingMessage, body: string, res: ServerResponse) => void = () => undefined;
  const seen: { method?: string; url?: string; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, body });
        answer(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const reply = (status: number, type: string, body: string | Buffer) => (_q: IncomingMessage, _b: string, res: ServerResponse) => {
    res.writeHead(status, { 'Content-Type': type });
    res.end(body);
  };

  it('sends the spec body to <prefix>/add-checkpoint', async () => {
    const line = cosignCheckpoint(parseNote(log.checkpoint()).text, witness.signer, 1700000000);
    answer = reply(200, 'text/plain', `${line}\n`);
    const r = await submitToWitness(`${url}/prefix/`, 1, log.proof(1), log.checkpoint(), { witness: parseVerifierKey(witness.verifierKey) });
    expect(r).toEqual({ status: 'cosigned', cosignatureLines: [line] });
    const last = seen.at(-1)!;
    expect([last.method, last.url]).toEqual(['POST', '/prefix/add-checkpoint']);
    const parsed = parseAddCheckpointRequest(last.body);
    expect([parsed.oldSize, parsed.proof.map((p) => p.toString('hex')), parsed.checkpoint]).toEqual([1, log.proof(1).map((p) => p.toString('hex')), log.checkpoint()]);
  });

  it('a 409 needs text/x.tlog.size and a decimal line; a 200 needs signature lines that verify', async () => {
    answer = reply(409, 'text/x.tlog.size', '12\n');
    expect(await submitToWitness(url, 0, [], log.checkpoint())).toEqual({ status: 'conflict', size: 12 });
    for (const [type, body] of [['text/plain', '12\n'], ['text/x.tlog.size', '012\n'], ['text/x.tlog.size', '12']]) {
      answer = reply(409, type, body);
      expect(await submitToWitness(url, 0, [], log.checkpoint())).toEqual({ status: 'rejected', http: 409, body });
    }
    for (const body of ['', 'ok\n', '— witness.test/fake AAAA\n', '— witness.test/fake AAAAAAAAAAA=']) {
      answer = reply(200, 'text/plain', body);
      expect((await submitToWitness(url, 0, [], log.checkpoint())).status).toBe('rejected');
    }
    // A line by the expected key that does not verify (signed over another checkpoint).
    const wrong = cosignCheckpoint(`${log.origin}\n1\n${log.root(1).toString('base64')}\n`, witness.signer, 1700000000);
    answer = reply(200, 'text/plain', `${wrong}\n`);
    expect(await submitToWitness(url, 0, [], log.checkpoint(), { witness: parseVerifierKey(witness.verifierKey) })).toEqual({ status: 'rejected', http: 200, body: 'a cosignature by witness.test/fake does not verify' });
    answer = reply(500, 'text/plain', 'boom');
    expect(await submitToWitness(url, 0, [], log.checkpoint())).toEqual({ status: 'rejected', http: 500, body: 'boom' });
    answer = reply(200, 'text/plain', Buffer.alloc(MAX_WITNESS_RESPONSE + 10, 0x41));
    expect(await submitToWitness(url, 0, [], log.checkpoint())).toEqual({ status: 'rejected', http: 200, body: `the response exceeds ${MAX_WITNESS_RESPONSE} bytes` });
  });

  it('a witness that never answers is unreachable after the timeout', async () => {
    answer = () => undefined;
    const t0 = Date.now();
    expect(await submitToWitness(url, 0, [], log.checkpoint(), { timeoutMs: 300 })).toEqual({ status: 'unreachable', error: 'timed out after 300 ms' });
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('parseListen', () => {
  it('needs a port; takes IPv4, names and [IPv6]', () => {
    expect(parseListen('127.0.0.1:7380')).toEqual({ host: '127.0.0.1', port: 7380 });
    expect(parseListen('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    expect(parseListen('[::1]:65535')).toEqual({ host: '::1', port: 65535 });
    for (const bad of ['127.0.0.1', '127.0.0.1:', ':7380', '::1:7380', '127.0.0.1:65536', '127.0.0.1:-1', 'a b:1', '127.0.0.1:123456']) expect(() => parseListen(bad)).toThrow();
  });
});
