/**
 * RFC 3161 checkpoint anchors against a real TSA (OpenSSL's `openssl ts -reply`, see test/helpers/openssl-tsa.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import * as fc from 'fast-check';
import * as pkijs from 'pkijs';
import {
  TSA_REASONS,
  TimestampVerified,
  buildTimeStampRequest,
  checkpointTimestampDigest,
  timeStampReplyFromToken,
  verifyTimeStampResponse,
} from '../../src/core/timestamp';
import { TimestampRequestResult, requestTimestamp } from '../../src/timestamp/tsa-client';
import { OpenSslTsa, startOpenSslTsa } from '../helpers/openssl-tsa';

jest.setTimeout(60_000);

const BODY = 'ledger.example/aer1\n42\nq6Xb1cJ8Q2h5nqVu6qk0mQeQpYlW3rF0k6yDkBQ1Ezs=\n';
const NOTE = `${BODY}\n\u2014 ledger.example/aer1 AAAAAQ==\n\u2014 witness.example Bbbbbb==\n`;
const OTHER_BODY = 'ledger.example/aer1\n43\nz1Xb1cJ8Q2h5nqVu6qk0mQeQpYlW3rF0k6yDkBQ1Ezs=\n';

async function stamp(tsa: OpenSslTsa, digest: Buffer, opts: { nonce?: bigint; certReq?: boolean } = {}): Promise<Buffer> {
  return post(tsa.url, buildTimeStampRequest(digest, opts));
}

async function post(url: string, query: Buffer): Promise<Buffer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/timestamp-query' }, body: query });
  if (res.status !== 200) throw new Error(`TSA answered ${res.status}: ${await res.text()}`);
  expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
  return Buffer.from(await res.arrayBuffer());
}

function expectRefused(result: TimestampRequestResult, code: string): void {
  expect(result).toEqual({ ok: false, code, message: expect.any(String) });
}

function verified(result: TimestampRequestResult): TimestampVerified {
  if (!result.ok) throw new Error(`expected ok, got ${result.code}: ${result.message}`);
  return result;
}

/** The SignerInfo signature bytes of a TimeStampResp, to tamper with. */
function signatureOf(resp: Buffer): Buffer {
  const parsed = pkijs.TimeStampResp.fromBER(new Uint8Array(resp));
  const signed = new pkijs.SignedData({ schema: parsed.timeStampToken!.content });
  return Buffer.from(signed.signerInfos[0].signature.valueBlock.valueHexView);
}

function flipByteAt(buf: Buffer, at: number): Buffer {
  const out = Buffer.from(buf);
  out[at] ^= 0x01;
  return out;
}

describe('RFC 3161 checkpoint timestamps (real OpenSSL TSA)', () => {
  let tsa: OpenSslTsa;
  let other: OpenSslTsa;
  let work: string;
  const digest = checkpointTimestampDigest(BODY);
  let answer: Buffer; // TimeStampResp for `digest` with nonce 77
  const NONCE = 77n;

  beforeAll(async () => {
    tsa = await startOpenSslTsa({ name: 'AER1 Main TSA' });
    other = await startOpenSslTsa({ name: 'AER1 Other TSA' });
    work = mkdtempSync(join(tmpdir(), 'aer1-tsa-spec-'));
    answer = await stamp(tsa, digest, { nonce: NONCE });
  });

  afterAll(async () => {
    await tsa?.close();
    await other?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  describe('checkpointTimestampDigest', () => {
    it('is SHA-256 of the body lines with their newlines, the same for the body and the whole signed note', () => {
      const expected = createHash('sha256').update(BODY, 'utf8').digest();
      expect(checkpointTimestampDigest(BODY)).toEqual(expected);
      expect(checkpointTimestampDigest(NOTE)).toEqual(expected);
      expect(checkpointTimestampDigest(OTHER_BODY)).not.toEqual(expected);
    });

    it('refuses text that is not a checkpoint body', () => {
      expect(() => checkpointTimestampDigest('')).toThrow(TypeError);
      expect(() => checkpointTimestampDigest('ledger.example/aer1\n42\nroot')).toThrow(TypeError);
      expect(() => checkpointTimestampDigest('\n\nsignature\n')).toThrow(TypeError);
    });
  });

  describe('buildTimeStampRequest', () => {
    it('is a TimeStampReq OpenSSL reads: sha256 imprint, nonce, certReq', () => {
      const file = join(work, 'req.der');
      writeFileSync(file, buildTimeStampRequest(digest, { nonce: 0x1234abcdn }));
      const text = execFileSync('openssl', ['ts', '-query', '-in', file, '-text'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(text).toMatch(/Hash Algorithm: sha256/);
      expect(text).toMatch(/Nonce: 0x1234ABCD/);
      expect(text).toMatch(/Certificate required: yes/);
      const hex = [...text.matchAll(/^\s+[0-9a-f]{4} - ([0-9a-f -]+?)\s{2,}/gm)].map((m) => m[1].replace(/[ -]/g, '')).join('');
      expect(hex).toBe(digest.toString('hex'));
    });

    it('omits the nonce unless given and takes certReq false; refuses a wrong-length digest or a zero nonce', () => {
      const file = join(work, 'req2.der');
      writeFileSync(file, buildTimeStampRequest(digest, { certReq: false }));
      const text = execFileSync('openssl', ['ts', '-query', '-in', file, '-text'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(text).toMatch(/Nonce: unspecified/);
      expect(text).toMatch(/Certificate required: no/);
      expect(() => buildTimeStampRequest(digest.subarray(0, 31))).toThrow(TypeError);
      expect(() => buildTimeStampRequest(digest, { nonce: 0n })).toThrow(RangeError);
    });
  });

  describe('verifyTimeStampResponse', () => {
    it('verifies a real token for the checkpoint digest: genTime, TSA name, policy, nonce, accuracy', async () => {
      const before = Date.now();
      const result = verified(await verifyTimeStampResponse(answer, digest, { certsPem: tsa.caPem }, { nonce: NONCE }));
      expect(Math.abs(Date.parse(result.genTime) - before)).toBeLessThan(60_000);
      expect(result.genTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(result.tsaName).toBe('CN=AER1 Main TSA, O=AER1 tests');
      expect(result.policy).toBe('1.3.6.1.4.1.99999.1.1');
      expect(result.nonce).toBe('77');
      expect(result.serialNumber).toMatch(/^[1-9]\d*$/);
      expect(result.accuracy).toEqual({ seconds: 1, millis: 500, micros: 100 });
      expect(result.signerCertificate.toString('base64')).toBe(tsa.tsaCertPem.replace(/-----[A-Z ]+-----|\s/g, ''));
    });

    it('returns the TimeStampToken exactly; stored and re-verified alone it still verifies, and OpenSSL agrees', async () => {
      const result = verified(await verifyTimeStampResponse(answer, digest, { certsPem: tsa.caPem }));
      expect(answer.subarray(answer.length - result.token.length)).toEqual(result.token);
      const again = verified(await verifyTimeStampResponse(result.token, digest, { certsPem: tsa.caPem }));
      expect(again.genTime).toBe(result.genTime);
      expect(again.serialNumber).toBe(result.serialNumber);
      const tokenFile = join(work, 'token.der');
      const caFile = join(work, 'ca.pem');
      writeFileSync(tokenFile, result.token);
      writeFileSync(caFile, tsa.caPem);
      const out = execFileSync('openssl', ['ts', '-verify', '-token_in', '-in', tokenFile, '-digest', digest.toString('hex'), '-CAfile', caFile], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(out).toMatch(/Verification: OK/);
    });

    it('wraps a stored token back into a granted TimeStampResp to serve: OpenSSL verifies it, and so do we', async () => {
      const { token } = verified(await verifyTimeStampResponse(answer, digest, { certsPem: tsa.caPem }));
      const reply = timeStampReplyFromToken(token);
      expect(reply.subarray(reply.length - token.length)).toEqual(token);
      const again = verified(await verifyTimeStampResponse(reply, digest, { certsPem: tsa.caPem }));
      expect(again.token).toEqual(token);
      const replyFile = join(work, 'reply.tsr');
      const caFile = join(work, 'ca2.pem');
      writeFileSync(replyFile, reply);
      writeFileSync(caFile, tsa.caPem);
      const out = execFileSync('openssl', ['ts', '-verify', '-in', replyFile, '-digest', digest.toString('hex'), '-CAfile', caFile], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(out).toMatch(/Verification: OK/);
      expect(() => timeStampReplyFromToken(Buffer.from('junk'))).toThrow(TypeError);
      expect(() => timeStampReplyFromToken(Buffer.concat([token, Buffer.from([0])]))).toThrow(TypeError);
    });

    it('accepts the full chain or the TSA certificate itself as the configured certificates', async () => {
      verified(await verifyTimeStampResponse(answer, digest, { certsPem: tsa.chainPem }));
      verified(await verifyTimeStampResponse(answer, digest, { certsPem: tsa.tsaCertPem }));
    });

    it('verifies an RSA TSA token as well', async () => {
      const rsa = await startOpenSslTsa({ keyType: 'rsa', name: 'AER1 RSA TSA' });
      try {
        const resp = await stamp(rsa, digest);
        const result = verified(await verifyTimeStampResponse(resp, digest, { certsPem: rsa.caPem }));
        expect(result.tsaName).toBe('CN=AER1 RSA TSA, O=AER1 tests');
        expectRefused(await verifyTimeStampResponse(flipByteAt(resp, resp.indexOf(signatureOf(resp)) + 100), digest, { certsPem: rsa.caPem }), 'tsa_signature_invalid');
      } finally {
        await rsa.close();
      }
    });

    it('refuses a token from another TSA (another CA): tsa_untrusted_chain', async () => {
      const foreign = await stamp(other, digest);
      verified(await verifyTimeStampResponse(foreign, digest, { certsPem: other.caPem })); // fine for its own CA
      expectRefused(await verifyTimeStampResponse(foreign, digest, { certsPem: tsa.caPem }), 'tsa_untrusted_chain');
      expectRefused(await verifyTimeStampResponse(answer, digest, { certsPem: other.chainPem }), 'tsa_untrusted_chain');
    });

    it('refuses a token for another checkpoint: tsa_imprint_mismatch', async () => {
      expectRefused(await verifyTimeStampResponse(answer, checkpointTimestampDigest(OTHER_BODY), { certsPem: tsa.caPem }), 'tsa_imprint_mismatch');
    });

    it('refuses a token with one byte of its signature flipped: tsa_signature_invalid', async () => {
      const sig = signatureOf(answer);
      const at = answer.indexOf(sig);
      expect(at).toBeGreaterThan(0);
      const broken = flipByteAt(answer, at + sig.length - 1);
      expectRefused(await verifyTimeStampResponse(broken, digest, { certsPem: tsa.caPem }), 'tsa_signature_invalid');
    });

    it('refuses a token whose TSTInfo was altered (genTime byte): tsa_signature_invalid', async () => {
      const resp = pkijs.TimeStampResp.fromBER(new Uint8Array(answer));
      const signed = new pkijs.SignedData({ schema: resp.timeStampToken!.content });
      const tst = Buffer.from(signed.encapContentInfo.eContent!.valueBlock.valueHexView);
      const genTime = Buffer.from((asn1js.fromBER(new Uint8Array(tst)).result as asn1js.Sequence).valueBlock.value[4].valueBeforeDecodeView);
      expect(genTime[0]).toBe(0x18); // GeneralizedTime
      const at = answer.indexOf(genTime);
      expect(at).toBeGreaterThan(0);
      const altered = Buffer.from(answer);
      altered[at + 5] = altered[at + 5] === 0x30 ? 0x31 : 0x30; // a year digit
      expectRefused(await verifyTimeStampResponse(altered, digest, { certsPem: tsa.caPem }), 'tsa_signature_invalid');
    });

    it('refuses a bad nonce or a missing one: tsa_nonce_mismatch', async () => {
      expectRefused(await verifyTimeStampResponse(answer, digest, { certsPem: tsa.caPem }, { nonce: NONCE + 1n }), 'tsa_nonce_mismatch');
      const noNonce = await stamp(tsa, digest);
      expectRefused(await verifyTimeStampResponse(noNonce, digest, { certsPem: tsa.caPem }, { nonce: NONCE }), 'tsa_nonce_mismatch');
    });

    it.each(['noncritical', 'none'] as const)('refuses a TSA certificate whose extendedKeyUsage is %s: tsa_bad_eku', async (eku) => {
      const bad = await startOpenSslTsa({ eku, name: `AER1 ${eku} TSA` });
      try {
        const resp = await stamp(bad, digest, { nonce: 5n });
        expectRefused(await verifyTimeStampResponse(resp, digest, { certsPem: bad.caPem }, { nonce: 5n }), 'tsa_bad_eku');
      } finally {
        await bad.close();
      }
    });

    it('refuses a token without the ESS signing-certificate attribute: tsa_signing_cert_mismatch', async () => {
      const noEss = await startOpenSslTsa({ noEss: true, name: 'AER1 No-ESS TSA' });
      try {
        const resp = await stamp(noEss, digest);
        expectRefused(await verifyTimeStampResponse(resp, digest, { certsPem: noEss.caPem }), 'tsa_signing_cert_mismatch');
      } finally {
        await noEss.close();
      }
    });

    it('refuses a token made after the TSA certificate expired: tsa_cert_not_valid', async () => {
      const expired = await startOpenSslTsa({ expired: true, name: 'AER1 Expired TSA' });
      try {
        await new Promise((resolve) => setTimeout(resolve, 1_100)); // genTime has whole seconds: let it pass notAfter
        const resp = await stamp(expired, digest);
        expectRefused(await verifyTimeStampResponse(resp, digest, { certsPem: expired.caPem }), 'tsa_cert_not_valid');
      } finally {
        await expired.close();
      }
    });

    it('refuses a rejection from the TSA (unsupported digest algorithm): tsa_status_not_granted', async () => {
      const queryFile = join(work, 'sha1.tsq');
      execFileSync('openssl', ['ts', '-query', '-digest', 'aa'.repeat(20), '-sha1', '-out', queryFile], { stdio: ['ignore', 'pipe', 'pipe'] });
      const rejected = await post(tsa.url, readFileSync(queryFile));
      const result = await verifyTimeStampResponse(rejected, digest, { certsPem: tsa.caPem });
      expectRefused(result, 'tsa_status_not_granted');
      expect(result.ok === false && result.message).toMatch(/PKIStatus 2/);
    });

    it('without certReq the signer must be configured: tsa_signer_missing, then ok with the TSA certificate', async () => {
      const bare = await stamp(tsa, digest, { certReq: false });
      expectRefused(await verifyTimeStampResponse(bare, digest, { certsPem: tsa.caPem }), 'tsa_signer_missing');
      verified(await verifyTimeStampResponse(bare, digest, { certsPem: tsa.chainPem }));
    });

    it('refuses garbage, truncated, empty and trailing-byte input: tsa_malformed', async () => {
      const trust = { certsPem: tsa.caPem };
      expectRefused(await verifyTimeStampResponse(Buffer.alloc(0), digest, trust), 'tsa_malformed');
      expectRefused(await verifyTimeStampResponse(Buffer.from('not a timestamp at all'), digest, trust), 'tsa_malformed');
      expectRefused(await verifyTimeStampResponse(answer.subarray(0, answer.length - 1), digest, trust), 'tsa_malformed');
      expectRefused(await verifyTimeStampResponse(answer.subarray(0, 40), digest, trust), 'tsa_malformed');
      expectRefused(await verifyTimeStampResponse(Buffer.concat([answer, Buffer.from([0])]), digest, trust), 'tsa_malformed');
      expectRefused(await verifyTimeStampResponse(Buffer.from([0x30, 0x00]), digest, trust), 'tsa_malformed');
      expectRefused(await verifyTimeStampResponse(Buffer.alloc(70_000, 0x30), digest, trust), 'tsa_malformed');
      // Deep nesting (indefinite-length SEQUENCEs) just under the size cap.
      const nested = Buffer.alloc(64 * 1024);
      for (let i = 0; i < nested.length; i += 2) nested.set([0x30, 0x80], i);
      const started = Date.now();
      expectRefused(await verifyTimeStampResponse(nested, digest, trust), 'tsa_malformed');
      expect(Date.now() - started).toBeLessThan(2_000);
      // A well-formed ContentInfo that is not SignedData.
      const data = new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: '1.2.840.113549.1.7.1' }), new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [new asn1js.OctetString({ valueHex: new Uint8Array(4) })] })] });
      expectRefused(await verifyTimeStampResponse(Buffer.from(data.toBER(false)), digest, trust), 'tsa_malformed');
    });

    it('never throws on hostile bytes: random input, truncations and byte flips give a typed refusal', async () => {
      const trust = { certsPem: tsa.caPem };
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
            fc.nat(answer.length - 1).map((n) => answer.subarray(0, n)),
            fc.tuple(fc.nat(answer.length - 1), fc.integer({ min: 1, max: 255 })).map(([at, x]) => {
              const b = Buffer.from(answer);
              b[at] ^= x;
              return b;
            }),
          ),
          async (bytes) => {
            const result = await verifyTimeStampResponse(bytes, digest, trust);
            if (result.ok) return; // a flip in an unsigned, unchecked spot (e.g. an unused certificate field) may still verify
            expect(TSA_REASONS).toContain(result.code);
          },
        ),
        { numRuns: 150 },
      );
    });

    it('reports unusable configured certificates as tsa_trust_invalid', async () => {
      expectRefused(await verifyTimeStampResponse(answer, digest, { certsPem: '' }), 'tsa_trust_invalid');
      expectRefused(await verifyTimeStampResponse(answer, digest, { certsPem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }), 'tsa_trust_invalid');
    });
  });

  describe('requestTimestamp', () => {
    it('timestamps a checkpoint end to end against the TSA and verifies the answer', async () => {
      const before = tsa.requests;
      const result = await requestTimestamp(tsa.url, digest, { certsPem: tsa.caPem });
      const ok = verified(result);
      expect(tsa.requests).toBe(before + 1);
      expect(ok.tsaName).toBe('CN=AER1 Main TSA, O=AER1 tests');
      expect(ok.nonce).toMatch(/^[1-9]\d*$/);
      expect(Math.abs(Date.parse(ok.genTime) - Date.now())).toBeLessThan(60_000);
      verified(await verifyTimeStampResponse(ok.token, digest, { certsPem: tsa.caPem }, { nonce: BigInt(ok.nonce!) }));
    });

    it('refuses the answer of a TSA the trust does not cover: tsa_untrusted_chain', async () => {
      expectRefused(await requestTimestamp(other.url, digest, { certsPem: tsa.caPem }), 'tsa_untrusted_chain');
    });

    describe('HTTP faults', () => {
      let server: Server;
      let base: string;
      beforeAll(async () => {
        server = createServer((req, res) => {
          req.resume();
          req.on('end', () => {
            if (req.url === '/500') res.writeHead(500).end('boom');
            else if (req.url === '/html') res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hi</p>');
            else if (req.url === '/big') res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(Buffer.alloc(100_000));
            else if (req.url === '/junk') res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end('junk');
            // '/slow' never answers
          });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      });
      afterAll(async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });

      it.each([
        ['/500', 'tsa_http_error'],
        ['/html', 'tsa_bad_content_type'],
        ['/big', 'tsa_response_too_large'],
        ['/junk', 'tsa_malformed'],
      ])('%s gives %s', async (path, code) => {
        expectRefused(await requestTimestamp(base + path, digest, { certsPem: tsa.caPem }), code);
      });

      it('gives tsa_timeout when no answer comes in time, tsa_unreachable when nothing listens', async () => {
        expectRefused(await requestTimestamp(base + '/slow', digest, { certsPem: tsa.caPem }, fetch, { timeoutMs: 300 }), 'tsa_timeout');
        const closed = createServer();
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
        const port = (closed.address() as AddressInfo).port;
        await new Promise<void>((resolve) => closed.close(() => resolve()));
        expectRefused(await requestTimestamp(`http://127.0.0.1:${port}/`, digest, { certsPem: tsa.caPem }), 'tsa_unreachable');
      });

      it('caps a body that passes the limit without a content-length', async () => {
        const fakeFetch = (async () =>
          new Response(
            new ReadableStream({
              pull(controller) {
                controller.enqueue(new Uint8Array(16 * 1024));
              },
            }),
            { status: 200, headers: { 'content-type': 'application/timestamp-reply' } },
          )) as unknown as typeof fetch;
        expectRefused(await requestTimestamp('http://tsa.invalid/', digest, { certsPem: tsa.caPem }, fakeFetch), 'tsa_response_too_large');
      });
    });
  });
});
