/**
 * A real RFC 3161 TSA for tests: Debian's `openssl ts -reply` behind a tiny node:http server.
 *
 * Each `startOpenSslTsa()` makes, in a fresh temp directory, a throwaway CA (`openssl req -x509`) and a TSA
 * key + certificate signed by it (`openssl req` + `openssl x509 -req`) with
 * `extendedKeyUsage=critical,timeStamping` (RFC 3161 2.3), and an `openssl ts` config (sha256 signer digest,
 * ESS cert id sha256, accuracy, ordering, tsa_name). POST a DER TimeStampReq (`application/timestamp-query`)
 * to `url`; the answer is the DER TimeStampResp (`application/timestamp-reply`).
 *
 * `eku: 'noncritical' | 'none'` makes a TSA whose certificate breaks RFC 3161 2.3. `openssl ts -reply`
 * refuses to sign with such a certificate, so that TSA gets its TSTInfo from `openssl ts -reply` under a
 * shadow certificate (same key and subject, correct EKU) and re-signs it with the bad certificate through
 * `openssl cms -sign -cades` (which adds the ESS signingCertificateV2 attribute, as a TSA would).
 * `noEss: true` re-signs the same way without `-cades`, for tokens lacking that attribute.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asn1js from 'asn1js';

export interface OpenSslTsa {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** PEM of the throwaway CA (the trust anchor to configure). */
  caPem: string;
  /** PEM of the TSA certificate followed by the CA (a full chain, as TSA_CERTS may hold it). */
  chainPem: string;
  /** PEM of the TSA signing certificate alone. */
  tsaCertPem: string;
  /** Requests answered so far. */
  requests: number;
  /** Stops the server and removes the temp directory. */
  close(): Promise<void>;
}

export interface OpenSslTsaOptions {
  /** extendedKeyUsage of the TSA certificate: 'critical' (RFC 3161, default), 'noncritical' or 'none'. */
  eku?: 'critical' | 'noncritical' | 'none';
  /** Key type of the CA and TSA: 'ec' (P-256, default, fast) or 'rsa' (2048). */
  keyType?: 'ec' | 'rsa';
  /** Make the TSA certificate valid for 0 days (notAfter = notBefore = start-up), so tokens made a second later postdate it. */
  expired?: boolean;
  /** Re-sign each TSTInfo with `openssl cms -sign` without `-cades`: tokens lack the ESS signing-certificate attribute. */
  noEss?: boolean;
  /** CN of the TSA certificate (default `AER1 Test TSA <n>`). */
  name?: string;
}

const OPENSSL_TIMEOUT_MS = 15_000;
let counter = 0;

/** Throws a clear error when the `openssl` command is missing (Debian package `openssl`). */
export function requireOpenSsl(): string {
  try {
    return execFileSync('openssl', ['version'], { encoding: 'utf8', timeout: OPENSSL_TIMEOUT_MS }).trim();
  } catch (e) {
    throw new Error(`the RFC 3161 tests need the openssl command (apt-get install -y openssl): ${e instanceof Error ? e.message : String(e)}`);
  }
}

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd, timeout: OPENSSL_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`openssl ${args[0]} ${args[1] ?? ''} failed: ${stderr || err.message}`));
      else resolve();
    });
  });
}

function opensslSync(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, timeout: OPENSSL_TIMEOUT_MS, stdio: ['ignore', 'ignore', 'pipe'] });
}

function extensionsFile(): string {
  const common = ['basicConstraints = CA:FALSE', 'keyUsage = critical,digitalSignature', 'subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid'];
  return [
    '[tsa_critical]',
    ...common,
    'extendedKeyUsage = critical,timeStamping',
    '[tsa_noncritical]',
    ...common,
    'extendedKeyUsage = timeStamping',
    '[tsa_none]',
    ...common,
    '',
  ].join('\n');
}
function tsConfig(signerCert: string, signerKey: string): string {
  return [
    '[tsa]',
    'default_tsa = tsa_config1',
    '[tsa_config1]',
    'serial = ./serial',
    'crypto_device = builtin',
    `signer_cert = ${signerCert}`,
    'certs = ./ca.pem',
    `signer_key = ${signerKey}`,
    'signer_digest = sha256',
    'default_policy = 1.3.6.1.4.1.99999.1.1',
    'other_policies = 1.3.6.1.4.1.99999.1.2',
    'digests = sha256, sha384, sha512',
    'accuracy = secs:1, millisecs:500, microsecs:100',
    'clock_precision_digits = 0',
    'ordering = yes',
    'tsa_name = yes',
    'ess_cert_id_chain = no',
    'ess_cert_id_alg = sha256',
    '',
  ].join('\n');
}

function keyArgs(keyType: 'ec' | 'rsa'): string[] {
  return keyType === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] : ['-newkey', 'rsa:2048'];
}

/** TimeStampResp { status { granted }, token } around a DER token (used for the re-signed bad-EKU tokens). */
function grantedResponse(tokenDer: Buffer): Buffer {
  const token = asn1js.fromBER(new Uint8Array(tokenDer));
  if (token.offset === -1) throw new Error('openssl cms produced no DER');
  const resp = new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [new asn1js.Integer({ value: 0 })] }), token.result] });
  return Buffer.from(resp.toBER(false));
}

/** Starts a TSA on 127.0.0.1 at a free port; see the file comment. Call `close()` in afterAll. */
export async function startOpenSslTsa(opts: OpenSslTsaOptions = {}): Promise<OpenSslTsa> {
  requireOpenSsl();
  const eku = opts.eku ?? 'critical';
  const keyType = opts.keyType ?? 'ec';
  const n = ++counter;
  const name = opts.name ?? `AER1 Test TSA ${n}`;
  const dir = mkdtempSync(join(tmpdir(), 'aer1-tsa-'));
  writeFileSync(join(dir, 'ext.cnf'), extensionsFile());
  writeFileSync(join(dir, 'serial'), '01\n');
  const subj = (cn: string) => `/CN=${cn}/O=AER1 tests`;
  opensslSync(['req', '-x509', ...keyArgs(keyType), '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', subj(`AER1 Test CA ${n}`), '-days', '2',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  opensslSync(['req', '-new', ...keyArgs(keyType), '-nodes', '-keyout', 'tsa.key', '-out', 'tsa.csr', '-subj', subj(name)], dir);
  const sign = (out: string, section: string) =>
    opensslSync(['x509', '-req', '-in', 'tsa.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', out, '-days', opts.expired ? '0' : '2', '-extfile', 'ext.cnf', '-extensions', section], dir);
  sign('tsa.pem', `tsa_${eku}`);
  if (eku === 'critical') {
    writeFileSync(join(dir, 'ts.cnf'), tsConfig('./tsa.pem', './tsa.key'));
  } else {
    sign('shadow.pem', 'tsa_critical');
    writeFileSync(join(dir, 'ts.cnf'), tsConfig('./shadow.pem', './tsa.key'));
  }
  const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  const tsaCertPem = readFileSync(join(dir, 'tsa.pem'), 'utf8');

  const resign = eku !== 'critical' || opts.noEss === true;
  let seq = 0;
  const answer = async (query: Buffer): Promise<Buffer> => {
    const id = ++seq;
    const q = `q${id}.der`;
    const r = `r${id}.der`;
    writeFileSync(join(dir, q), query);
    await openssl(['ts', '-reply', '-config', 'ts.cnf', '-queryfile', q, '-out', r], dir);
    if (!resign) return readFileSync(join(dir, r));
    // Re-sign the (shadow) TSA's TSTInfo with the TSA certificate (which may break RFC 3161 2.3), with or without ESS.
    await openssl(['ts', '-reply', '-config', 'ts.cnf', '-queryfile', q, '-token_out', '-out', `t${id}.der`], dir);
    await openssl(['cms', '-verify', '-noverify', '-inform', 'DER', '-in', `t${id}.der`, '-binary', '-out', `i${id}.der`], dir);
    await openssl(
      ['cms', '-sign', ...(opts.noEss ? [] : ['-cades']), '-nosmimecap', '-md', 'sha256', '-econtent_type', '1.2.840.113549.1.9.16.1.4', '-nodetach', '-binary',
        '-in', `i${id}.der`, '-signer', 'tsa.pem', '-inkey', 'tsa.key', '-certfile', 'ca.pem', '-outform', 'DER', '-out', `b${id}.der`],
      dir,
    );
    return grantedResponse(readFileSync(join(dir, `b${id}.der`)));
  };

  const tsa: Partial<OpenSslTsa> & { requests: number } = { requests: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 64 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      if (req.method !== 'POST' || size > 64 * 1024) {
        res.writeHead(400).end();
        return;
      }
      answer(Buffer.concat(chunks)).then(
        (der) => {
          tsa.requests += 1;
          res.writeHead(200, { 'content-type': 'application/timestamp-reply', 'content-length': der.length }).end(der);
        },
        (e: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(e instanceof Error ? e.message : String(e));
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return Object.assign(tsa, {
    url: `http://127.0.0.1:${port}/`,
    caPem,
    tsaCertPem,
    chainPem: tsaCertPem + caPem,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        server.closeAllConnections();
      }),
  }) as OpenSslTsa;
}
