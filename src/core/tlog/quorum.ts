/**
 * Who must have signed and cosigned a checkpoint (the log's key, witness
 * keys and their quorum), and the quorum check over a signed note
 * (c2sp.org/tlog-cosignature). Shared by the proof check and the pack check.
 */
import { Cosignature, verifyCosignatures } from './cosignature';
import { NoteVerifier } from './keys';
import { isTlogError, TlogErrorCode } from './errors';
import type { LogCheck } from './log-proof';

/** Who must have signed and cosigned. */
export interface TrustPolicy {
  /** The log's key (type 0x01); its name is the log origin. */
  log: NoteVerifier;
  /** Witness keys (type 0x04). */
  witnesses: readonly NoteVerifier[];
  /** Valid cosignatures needed (0 without witnesses). */
  quorum: number;
  /** PEM of the TSA chain, to check a carried RFC 3161 token. */
  tsaCertsPem?: string;
  /** The Nostr publisher key trusted for a carried anchor event (`--nostr-pubkey`, 64 hex). */
  nostrPubkey?: string;
  /** Keys trusted for endpoint commitments (`--trusted-key`, the server's TRUSTED_COMMITMENT_KEYS), to judge attested ones. */
  commitmentKeys?: readonly NoteVerifier[];
}

/** The code and words of a thrown failure. */
export function failure(e: unknown): { code: TlogErrorCode | 'error'; message: string } {
  if (isTlogError(e)) return { code: e.code, message: e.message };
  return { code: 'error', message: e instanceof Error ? e.message : String(e) };
}

/** Cosignatures by `witnesses` on `note` against the quorum (a check, and the valid ones). */
export function quorumCheck(note: string, policy: TrustPolicy): { check: LogCheck; valid: Cosignature[] } {
  const n = policy.witnesses.length;
  try {
    const { cosignatures } = verifyCosignatures(note, policy.witnesses);
    const names = cosignatures.map((c) => `${c.name} at ${new Date(c.timestamp * 1000).toISOString()}`).join(', ');
    const ok = cosignatures.length >= policy.quorum;
    return {
      check: { name: 'cosignatures', ok, ...(ok ? {} : { code: 'quorum_not_met' }), detail: `${cosignatures.length} of ${n} witness${n === 1 ? '' : 'es'} cosigned, ${policy.quorum} needed${names ? `: ${names}` : ''}` },
      valid: cosignatures,
    };
  } catch (e) {
    const f = failure(e);
    return { check: { name: 'cosignatures', ok: false, code: f.code, detail: f.message }, valid: [] };
  }
}

/**
 * A quorum rule over witnesses (the Sigsum policy's quorum: a witness, or a
 * group that holds when at least `k` of its members hold, each member a
 * witness or a group; git.glasklar.is/sigsum/core/sigsum-go doc/policy.md).
 * A witness is named by its key (the vkey string). A group with no members
 * and k = 0 is the Sigsum `none`: it always holds.
 */
export type QuorumRule = { readonly kind: 'witness'; readonly name: string; readonly key: string } | { readonly kind: 'group'; readonly name: string; readonly k: number; readonly members: readonly QuorumRule[] };

/** The rule that needs no cosignature (Sigsum `quorum none`). */
export const QUORUM_NONE: QuorumRule = { kind: 'group', name: 'none', k: 0, members: [] };

/** k of `keys` (each a witness named by its key), as one group: the rule of WITNESSES / WITNESS_QUORUM. */
export function kOfN(name: string, k: number, witnesses: readonly { name: string; key: string }[]): QuorumRule {
  return { kind: 'group', name, k, members: witnesses.map((w) => ({ kind: 'witness', name: w.name, key: w.key })) };
}

/** True when the witnesses whose keys are in `cosigned` satisfy `rule`. */
export function quorumReached(rule: QuorumRule, cosigned: ReadonlySet<string>): boolean {
  if (rule.kind === 'witness') return cosigned.has(rule.key);
  let held = 0;
  for (const m of rule.members) {
    if (quorumReached(m, cosigned) && ++held >= rule.k) return true;
  }
  return held >= rule.k;
}

/**
 * The fewest cosignatures that can satisfy `rule` (0 for `none`): a witness
 * needs 1, a k-of-n group the sum of its k cheapest members. Members are
 * disjoint (each name is a member of one group at most), so the sum is exact.
 */
export function quorumMinimum(rule: QuorumRule): number {
  if (rule.kind === 'witness') return 1;
  const costs = rule.members.map(quorumMinimum).sort((a, b) => a - b);
  return costs.slice(0, rule.k).reduce((a, b) => a + b, 0);
}

/** The keys of the witnesses in `rule`'s tree: those whose cosignatures count. */
export function quorumKeys(rule: QuorumRule): string[] {
  return rule.kind === 'witness' ? [rule.key] : rule.members.flatMap(quorumKeys);
}

/** The rule in words, e.g. `all of (eu: 2 of (w1, w2, w3), us: any of (w4, w5))`; `none` for no cosignature. */
export function describeQuorum(rule: QuorumRule, top = true): string {
  if (rule.kind === 'witness') return rule.name;
  if (rule.members.length === 0) return 'none';
  const k = rule.k === rule.members.length ? 'all' : rule.k === 1 ? 'any' : String(rule.k);
  const inner = `${k} of (${rule.members.map((m) => describeQuorum(m, false)).join(', ')})`;
  return top ? inner : `${rule.name}: ${inner}`;
}
