/**
 * WITNESSES / WITNESS_QUORUM or WITNESS_POLICY_FILE (issue 15, issue 32),
 * and TSA_URL / TSA_CERTS / TSA_INTERVAL_MS, parsed and checked once at
 * start: a bad value stops the process with a message naming the variable
 * (and, for the policy file, the line).
 */
import { readFileSync } from 'node:fs';
import { NoteVerifier, parseVerifierKey, SIG_COSIGNATURE_V1 } from '../core/tlog';
import { kOfN, QuorumRule, QUORUM_NONE, quorumKeys, quorumMinimum } from '../core/tlog/quorum';
import { parseCertificatesPem } from '../core/timestamp';
import { parseWitnessPolicyFile, WitnessPolicyFileError } from './witness-policy-file';

/** One configured witness: its base URL (add-checkpoint is POSTed to `<url>/add-checkpoint`) and its key. */
export interface WitnessConfig {
  readonly url: string;
  readonly vkey: string;
  readonly verifier: NoteVerifier;
  /** Its name in the policy file; with WITNESSES, its key name. */
  readonly name: string;
  /** Counts toward the quorum (in the quorum's tree); false: asked, stored, served, never counted. */
  readonly required: boolean;
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
    return { url: url.replace(/\/+$/, ''), vkey, verifier, name: verifier.name, required: true };
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

/** The policy the ledger witnesses by: the witnesses it asks and the rule their cosignatures must meet. */
export interface WitnessingPolicy {
  /** Every witness asked (required and optional), in configured order. */
  readonly witnesses: readonly WitnessConfig[];
  /** The quorum rule over the witnesses' vkeys ({@link QUORUM_NONE} without witnesses). */
  readonly rule: QuorumRule;
  /** The fewest valid cosignatures that can meet the rule (k for WITNESSES; 0 for `quorum none`). */
  readonly quorum: number;
  /** Where it was configured: none, WITNESSES (k of n), or WITNESS_POLICY_FILE (its path). */
  readonly source: { readonly kind: 'none' } | { readonly kind: 'WITNESSES' } | { readonly kind: 'WITNESS_POLICY_FILE'; readonly path: string };
  /** The policy file's `log` line key (a vkey or 64 hex digits), to check against this log's key at start; null without one. */
  readonly logKey: string | null;
}

/**
 * The witnessing policy from WITNESSES / WITNESS_QUORUM (k of n, all
 * required) or from WITNESS_POLICY_FILE (Sigsum policy format,
 * witness-policy-file.ts), never both. Throws an Error naming the variable:
 * for the file, also its path and the line (`WITNESS_POLICY_FILE p: line 7: ...`),
 * or that it cannot be read.
 */
export function loadWitnessPolicy(env: { WITNESSES?: string; WITNESS_QUORUM?: string | number; WITNESS_POLICY_FILE?: string }): WitnessingPolicy {
  const file = env.WITNESS_POLICY_FILE?.trim() || undefined;
  if (!file) {
    const p = parseWitnessPolicy(env.WITNESSES, env.WITNESS_QUORUM);
    if (p.witnesses.length === 0) return { witnesses: [], rule: QUORUM_NONE, quorum: 0, source: { kind: 'none' }, logKey: null };
    return { witnesses: p.witnesses, rule: kOfN('WITNESSES', p.quorum, p.witnesses.map((w) => ({ name: w.name, key: w.vkey }))), quorum: p.quorum, source: { kind: 'WITNESSES' }, logKey: null };
  }
  if (env.WITNESSES?.trim()) throw new Error('WITNESSES and WITNESS_POLICY_FILE are both set: name the witnesses in one place (the policy file)');
  if (env.WITNESS_QUORUM !== undefined && env.WITNESS_QUORUM !== '') throw new Error('WITNESS_QUORUM is set with WITNESS_POLICY_FILE: the file\'s quorum line is the quorum');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`WITNESS_POLICY_FILE ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let parsed;
  try {
    parsed = parseWitnessPolicyFile(text);
  } catch (e) {
    if (e instanceof WitnessPolicyFileError) throw new Error(`WITNESS_POLICY_FILE ${file}: ${e.message}`);
    throw e;
  }
  const counted = new Set(quorumKeys(parsed.quorum));
  const witnesses = parsed.witnesses.map((w): WitnessConfig => ({ url: w.url, vkey: w.vkey, verifier: w.verifier, name: w.name, required: counted.has(w.vkey) }));
  return { witnesses, rule: parsed.quorum, quorum: quorumMinimum(parsed.quorum), source: { kind: 'WITNESS_POLICY_FILE', path: file }, logKey: parsed.log?.key ?? null };
}

/**
 * The start check of a policy file's `log` line against this log's key:
 * null when it matches (the vkey, or the hex of its Ed25519 public key) or
 * there is none; else the refusal, naming both.
 */
export function logKeyMismatch(policy: WitnessingPolicy, log: { vkey: string; publicKey: Buffer } | null): string | null {
  if (policy.logKey === null || log === null) return null;
  const k = policy.logKey;
  if (k === log.vkey || k.toLowerCase() === log.publicKey.toString('hex')) return null;
  const path = policy.source.kind === 'WITNESS_POLICY_FILE' ? policy.source.path : 'the policy';
  return `WITNESS_POLICY_FILE ${path}: its log line names ${k}, but this log's key is ${log.vkey}: the witnesses would be asked to cosign another log`;
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
