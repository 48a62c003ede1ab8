/**
 * WITNESSES / WITNESS_QUORUM and TSA_URL / TSA_CERTS / TSA_INTERVAL_MS
 * (issue 15), parsed and checked once at start: a bad value stops the
 * process with a message naming the variable.
 */
import { readFileSync } from 'node:fs';
import { NoteVerifier, parseVerifierKey, SIG_COSIGNATURE_V1 } from '../core/tlog';
import { parseCertificatesPem } from '../core/timestamp';

/** One configured witness: its base URL (add-checkpoint is POSTed to `<url>/add-checkpoint`) and its key. */
export interface WitnessConfig {
  readonly url: string;
  readonly vkey: string;
  readonly verifier: NoteVerifier;
}

/** The witnessing policy: `witnesses` (n, possibly none) and `quorum` k (1..n; 0 when there are none). */
export interface WitnessPolicy {
  readonly witnesses: readonly WitnessConfig[];
  readonly quorum: number;
}

/**
 * Parse WITNESSES (a JSON array of `{"url": "http(s)://host:port", "vkey":
 * "<name>+<hex id>+<base64 of 0x04 || key>"}`, or unset/empty for none) and
 * WITNESS_QUORUM (k, default n: every witness must cosign). Throws an Error
 * naming the variable for: invalid JSON, a URL that is not http(s), a vkey
 * that does not parse or is not a type 0x04 cosignature key, the same key
 * twice, k outside 1..n, or WITNESS_QUORUM without WITNESSES.
 */
export function parseWitnessPolicy(witnesses: string | undefined, quorum: string | number | undefined): WitnessPolicy {
  const k = quorum === undefined || quorum === '' ? undefined : Number(quorum);
  if (k !== undefined && (!Number.isSafeInteger(k) || k < 1)) throw new Error('WITNESS_QUORUM must be a positive integer');
  if (witnesses === undefined || witnesses.trim() === '') {
    if (k !== undefined) throw new Error('WITNESS_QUORUM is set but WITNESSES is not');
    return { witnesses: [], quorum: 0 };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(witnesses);
  } catch (e) {
    throw new Error(`WITNESSES is not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(raw)) throw new Error('WITNESSES must be a JSON array of {"url", "vkey"}');
  const out: WitnessConfig[] = raw.map((w: unknown, i) => {
    if (typeof w !== 'object' || w === null || Array.isArray(w)) throw new Error(`WITNESSES[${i}] must be an object {"url", "vkey"}`);
    const { url, vkey } = w as { url?: unknown; vkey?: unknown };
    if (typeof url !== 'string' || !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(url)) throw new Error(`WITNESSES[${i}].url must be an http(s) URL`);
    if (typeof vkey !== 'string') throw new Error(`WITNESSES[${i}].vkey must be a verifier key string`);
    let verifier: NoteVerifier;
    try {
      verifier = parseVerifierKey(vkey);
    } catch (e) {
      throw new Error(`WITNESSES[${i}].vkey does not parse: ${(e as Error).message}`);
    }
    if (verifier.type !== SIG_COSIGNATURE_V1) throw new Error(`WITNESSES[${i}].vkey is not a witness key (type 0x04, c2sp.org/tlog-cosignature); create one with aer1 witness create-key`);
    return { url: url.replace(/\/+$/, ''), vkey, verifier };
  });
  const names = new Set(out.map((w) => `${w.verifier.name}+${w.verifier.keyId}`));
  if (names.size !== out.length) throw new Error('WITNESSES names the same witness key twice');
  if (out.length === 0) {
    if (k !== undefined) throw new Error('WITNESS_QUORUM is set but WITNESSES is empty');
    return { witnesses: [], quorum: 0 };
  }
  const q = k ?? out.length;
  if (q > out.length) throw new Error(`WITNESS_QUORUM (${q}) exceeds the number of WITNESSES (${out.length})`);
  return { witnesses: out, quorum: q };
}

/** The RFC 3161 anchoring settings: none, or the TSA's URL, its trust PEM and the interval. */
export type TsaSettings = null | { readonly url: string; readonly certsPem: string; readonly intervalMs: number };

/**
 * TSA_URL (http(s)) and TSA_CERTS (path of a PEM file with the TSA's
 * certificate chain or its CA) go together; TSA_INTERVAL_MS (default 60000,
 * 0 = every checkpoint). Throws an Error naming the variable when only one
 * is set, the file cannot be read, or it holds no X.509 certificate.
 */
export function parseTsaSettings(url: string | undefined, certsFile: string | undefined, intervalMs: number): TsaSettings {
  const u = url?.trim() || undefined;
  const f = certsFile?.trim() || undefined;
  if (!u && !f) return null;
  if (!u) throw new Error('TSA_CERTS is set but TSA_URL is not');
  if (!f) throw new Error('TSA_URL is set but TSA_CERTS (the TSA certificate chain, PEM) is not');
  if (!/^https?:\/\/\S+$/.test(u)) throw new Error('TSA_URL must be an http(s) URL');
  let pem: string;
  try {
    pem = readFileSync(f, 'utf8');
  } catch (e) {
    throw new Error(`TSA_CERTS ${f} cannot be read: ${(e as Error).message}`);
  }
  try {
    parseCertificatesPem(pem);
  } catch (e) {
    throw new Error(`TSA_CERTS ${f}: ${(e as Error).message}`);
  }
  return { url: u, certsPem: pem, intervalMs };
}
