/**
 * RFC 3161 time anchors of checkpoints (S10, issue 15) end to end, on SQLite
 * and PostgreSQL: a real TSA (`openssl ts -reply`, throwaway CA) behind a
 * small proxy the test steers; the ledger with TSA_URL / TSA_CERTS /
 * TSA_INTERVAL_MS=0 timestamps its checkpoints, verifies each token and
 * serves it (DER TimeStampResp) at /api/ledger/checkpoints/{size}/timestamp,
 * in the record's log location and in the proof file, which `openssl ts
 * -verify` and `aer1 log verify-proof --tsa-certs` accept. Tokens from
 * another TSA, for another checkpoint, or with a broken signature are
 * refused, logged in /health and never stored. Run `npm run build` first
 * (the CLI runs from dist).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { LogService } from '../../src/log/log.service';
import { checkpointTimestampDigest, verifyTimeStampResponse } from '../../src/core/timestamp';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { OpenSslTsa, startOpenSslTsa } from '../helpers/openssl-tsa';
import { freshReceipt, waitUntil } from '../reliability/helpers';
import { aer1, requireBuild, tempDir } from '../witness/helpers';

jest.setTimeout(120_000);

type Mode = 'pass' | 'other-tsa' | 'other-checkpoint' | 'broken-signature';

/** A proxy in front of two TSAs: forwards to `good`, or alters the exchange as `mode` says. */
async function startProxy(good: OpenSslTsa, other: OpenSslTsa): Promise<{ url: string; mode: Mode; requests: number; server: Server }> {
  const state = { url: '', mode: 'pass' as Mode, requests: 0, server: undefined as unknown as Server };
  state.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        state.requests += 1;
        let body = Buffer.concat(chunks);
        if (state.mode === 'other-checkpoint') {
          // Replace the SHA-256 imprint (after the algorithm's NULL parameters) with the digest of something else.
          const at = body.indexOf(Buffer.from([0x05, 0x00, 0x04, 0x20]));
          body = Buffer.concat([body.subarray(0, at + 4), checkpointTimestampDigest('another.origin\n1\nAAAA\n'), body.subarray(at + 36)]);
        }
        const upstream = await fetch(state.mode === 'other-tsa' ? other.url : good.url, { method: 'POST', body, headers: { 'content-type': 'application/timestamp-query' } });
        let answer = Buffer.from(await upstream.arrayBuffer());
        if (state.mode === 'broken-signature') {
          answer = Buffer.from(answer);
          answer[answer.length - 1] ^= 0x01; // the last byte of the SignerInfo's signature
        }
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
        res.end(answer);
      })().catch(() => {
        res.writeHead(502);
        res.end();
      });
    });
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', () => r()));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/`;
  return state;
}

describe.each(DIALECTS)('RFC 3161 time anchors of checkpoints (%s)', (dialect) => {
  const tmp = tempDir('aer1-anchors-');
  let tsa: OpenSslTsa;
  let otherTsa: OpenSslTsa;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let t: TestApp;
  let caFile: string;

  beforeAll(async () => {
    requireBuild();
    tsa = await startOpenSslTsa({ name: 'AER1 Anchor TSA' });
    otherTsa = await startOpenSslTsa({ name: 'Some Other TSA' });
    proxy = await startProxy(tsa, otherTsa);
    caFile = join(tmp.path, 'tsa-chain.pem');
    writeFileSync(caFile, tsa.chainPem);
    t = await startApp(dialect, { TSA_URL: proxy.url, TSA_CERTS: caFile, TSA_INTERVAL_MS: '0', CHECKPOINT_INTERVAL_MS: '50' });
  });

  afterAll(async () => {
    await t?.close();
    await new Promise((r) => proxy?.server.close(r));
    await tsa?.close();
    await otherTsa?.close();
    tmp.cleanup();
  });

  async function addReceipt(): Promise<string> {
    const r = freshReceipt();
    const res = await t.http.post('/api/receipts').set('authorization', `Bearer ${t.keys.producer}`).set('content-type', 'application/json').send(r.text);
    expect(res.status).toBe(201);
    return r.id;
  }

  async function newest(): Promise<{ size: number; note: string }> {
    const r = await t.http.get('/checkpoint/latest');
    return { size: Number(r.text.split('\n')[1]), note: r.text };
  }

  async function timestampOf(size: number): Promise<{ status: number; type: string; body: Buffer }> {
    const r = await t.http
      .get(`/api/ledger/checkpoints/${size}/timestamp`)
      .buffer(true)
      .parse((res, cb) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => cb(null, Buffer.concat(parts)));
      });
    return { status: r.status, type: String(r.headers['content-type'] ?? ''), body: r.body as Buffer };
  }

  it('timestamps the checkpoint, verifies and serves the token; the record and its proof file carry it', async () => {
    const id = await addReceipt();
    let size = 0;
    await waitUntil('a timestamp of the newest checkpoint', 30_000, async () => {
      size = (await newest()).size;
      return size >= 1 && (await timestampOf(size)).status === 200;
    });
    const { note } = await (async () => ({ note: (await t.http.get(`/api/ledger/checkpoints/${size}`)).text }))();
    const ts = await timestampOf(size);
    expect(ts.type).toMatch(/^application\/timestamp-reply/);
    const digest = checkpointTimestampDigest(note);
    const v = await verifyTimeStampResponse(ts.body, digest, { certsPem: tsa.caPem });
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.tsaName).toBe('CN=AER1 Anchor TSA, O=AER1 tests');
    expect(Math.abs(Date.parse(v.genTime) - Date.now())).toBeLessThan(120_000);
    // The same token checks with OpenSSL itself.
    const file = join(tmp.path, `cp-${dialect}.tsr`);
    writeFileSync(file, ts.body);
    const caOnly = join(tmp.path, `ca-${dialect}.pem`);
    writeFileSync(caOnly, tsa.caPem);
    expect(execFileSync('openssl', ['ts', '-verify', '-digest', digest.toString('hex'), '-in', file, '-CAfile', caOnly], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })).toMatch(/Verification: OK/);
    // The anchors list of the checkpoint names the token (issue 33); no Nostr anchor without NOSTR_RELAYS.
    const anchors = await t.http.get(`/api/ledger/checkpoints/${size}/anchors`);
    expect(anchors.body).toEqual({ size, anchors: [{ type: 'rfc3161', size, gen_time: v.genTime, tsa_name: 'CN=AER1 Anchor TSA, O=AER1 tests', received_at: expect.any(String), url: `https://ledger.test/api/ledger/checkpoints/${size}/timestamp` }] });
    expect((await t.http.get('/api/ledger/checkpoints/999999/anchors')).body.error).toBe('checkpoint_not_found');
    // Not timestamped: 404.
    const none = await t.http.get('/api/ledger/checkpoints/0/timestamp');
    expect([none.status, none.body.error]).toEqual([404, 'timestamp_not_found']);

    // The record's log location names the anchor (genTime, TSA) of the checkpoint it is proven against.
    const receipt = await t.http.get(`/api/receipts/${id}`);
    const position = Number(receipt.body.position ?? receipt.body.receipt?.position);
    expect(position).toBeGreaterThanOrEqual(1);
    const loc = await t.app.get(LogService).locate(position, 'https://ledger.test/proof');
    expect(loc.status).toBe('proven');
    expect(loc.timestamp).toEqual({ gen_time: expect.any(String), tsa_name: 'CN=AER1 Anchor TSA, O=AER1 tests', size: loc.checkpoint?.size, url: `https://ledger.test/api/ledger/checkpoints/${loc.checkpoint?.size}/timestamp` });

    // The proof file carries the token; aer1 log verify-proof checks it with the chain, and refuses it with another TSA's.
    const proof = await t.http.get(`/api/receipts/${id}/proof`);
    expect(proof.status).toBe(200);
    expect(proof.body.timestamp_info.tsa_name).toBe('CN=AER1 Anchor TSA, O=AER1 tests');
    expect(typeof proof.body.timestamp).toBe('string');
    const pf = join(tmp.path, `proof-${dialect}.json`);
    writeFileSync(pf, JSON.stringify(proof.body));
    const vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    const ok = aer1(['log', 'verify-proof', pf, '--vkey', vkey, '--tsa-certs', caOnly]);
    expect([ok.code, ok.err]).toEqual([0, '']);
    expect(ok.out).toMatch(/AER1 Anchor TSA/);
    const wrongCa = join(tmp.path, `other-ca-${dialect}.pem`);
    writeFileSync(wrongCa, otherTsa.caPem);
    expect(aer1(['log', 'verify-proof', pf, '--vkey', vkey, '--tsa-certs', wrongCa]).code).toBe(1);

    const h = await t.http.get('/health');
    expect(h.body.details.log.timestamps).toMatchObject({ tsa_url: proxy.url, tsa_name: 'CN=AER1 Anchor TSA, O=AER1 tests' });
    expect(h.body.details.log.timestamps.timestamped_size).toBeGreaterThanOrEqual(size);
  });

  it.each([
    ['other-tsa', /^the RFC 3161 token for checkpoint \d+ was refused \((tsa_untrusted_chain|tsa_signer_missing)\)/],
    ['other-checkpoint', /^the RFC 3161 token for checkpoint \d+ was refused \(tsa_imprint_mismatch\)/],
    ['broken-signature', /^the RFC 3161 token for checkpoint \d+ was refused \(tsa_signature_invalid\)/],
  ] as [Mode, RegExp][])('refuses a token %s, logs why and stores nothing', async (mode, why) => {
    proxy.mode = mode;
    const before = proxy.requests;
    await addReceipt();
    let size = 0;
    await waitUntil('a refusal', 30_000, async () => {
      size = (await newest()).size;
      const h = await t.http.get('/health');
      return proxy.requests > before && why.test(h.body.details.log.timestamps.last_error ?? '') && new RegExp(`checkpoint ${size} `).test(h.body.details.log.timestamps.last_error);
    });
    expect((await timestampOf(size)).status).toBe(404);
    proxy.mode = 'pass';
  });

  it('after the refusals a good token is stored again', async () => {
    proxy.mode = 'pass';
    await addReceipt();
    await waitUntil('a new token', 30_000, async () => {
      const { size } = await newest();
      return (await timestampOf(size)).status === 200;
    });
    const h = await t.http.get('/health');
    expect(h.body.details.log.timestamps.last_error).toBeUndefined();
  });
});
