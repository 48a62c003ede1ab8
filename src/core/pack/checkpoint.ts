/**
 * The checkpoint phase: the `log/vkey` member against --vkey, the
 * `log/checkpoint` note's signature (`checkpoint_signature`) and witness
 * cosignatures (`cosignatures`), its RFC 3161 token (`timestamp`), and its
 * Nostr anchor (`nostr_event`, `nostr_signature`, `nostr_content`,
 * `nostr_consistency`, `nostr_pubkey`).
 * A checkpoint --vkey does not sign stops the check (issue 27).
 */
import { checkNostrAnchor } from '../nostr/anchor';
import { Checkpoint, isTlogError, verifyCheckpoint, verifyConsistency } from '../tlog';
import { PackDeps, PackPolicy, PackReport, Tally } from './result';

type Obj = Record<string, unknown>;

/** What the checkpoint phase found. */
export class CheckpointState {
  cp: Checkpoint | null = null;
  note: string | null = null;
  /** The `log/vkey` member's key (the server's statement), when it is not --vkey. */
  otherVkey: string | null = null;
  /** Set when the checkpoint does not verify under --vkey: every later check depends on it, so checking stops there. */
  stopped: string | null = null;
  cosigs: { name: string; timestamp: number }[] = [];
  timestamp: PackReport['timestamp'] = null;
  nostr: PackReport['nostr'] = null;
}

/** Strict base64 bytes, or null. */
export const b64 = (s: unknown): Buffer | null => (typeof s === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(s) ? Buffer.from(s, 'base64') : null);

/** `log/vkey`: the pack names --vkey (only --vkey is trusted). */
export function vkeyMember(s: CheckpointState, name: string, m: Obj, policy: PackPolicy, t: Tally): void {
  if (m.vkey !== policy.log.vkey) {
    s.otherVkey = typeof m.vkey === 'string' ? m.vkey : JSON.stringify(m.vkey);
    t.fail(name, 'vkey', `the pack names the log key ${JSON.stringify(m.vkey)}, not --vkey ${policy.log.vkey} (only --vkey is trusted)`);
  } else t.pass('vkey');
}

/** `log/checkpoint`: signed by --vkey, its size as stated, cosigned by a quorum of witnesses. Sets `stopped` when --vkey does not sign it. */
export function checkpointMember(s: CheckpointState, name: string, m: Obj, policy: PackPolicy, deps: PackDeps, t: Tally): void {
  s.note = typeof m.note === 'string' ? m.note : '';
  try {
    s.cp = verifyCheckpoint(s.note, [policy.log], policy.log.name).checkpoint;
    if (m.size !== s.cp.size) t.fail(name, 'checkpoint_signature', `size ${String(m.size)} is not the signed note's ${s.cp.size}`);
    t.pass('checkpoint_signature');
  } catch (e) {
    // Issue 27: nothing else can be checked against a checkpoint --vkey does not sign (every inclusion, and the
    // reports, judge against it): say that one thing and stop, rather than list what depends on it as failures.
    const why = isTlogError(e) ? `${e.code}: ${e.message}` : (e as Error).message;
    s.stopped =
      s.otherVkey !== null
        ? `the checkpoint does not verify under --vkey ${policy.log.vkey} (${why}): the pack names the log key ${s.otherVkey}. Wrong key given, or a pack of another log: check the key with the operator (GET /.well-known/aer1 gives log_vkey)`
        : `the checkpoint does not verify under --vkey ${policy.log.vkey} (${why}): the signed note was altered, or the pack is of another log`;
    return;
  }
  if (policy.witnesses.length > 0) {
    const q = deps.quorumCheck(s.note, policy);
    if (q.check.ok) t.pass('cosignatures');
    else t.fail(name, 'cosignatures', q.check.detail);
    s.cosigs = q.valid.map((c) => ({ name: c.name, timestamp: c.timestamp }));
  }
}

/** `log/timestamp`: the RFC 3161 token over the checkpoint, checked against --tsa-certs (not checked without it). */
export async function timestampMember(s: CheckpointState, name: string, m: Obj, policy: PackPolicy, deps: PackDeps, t: Tally): Promise<void> {
  const der = b64(m.timestamp);
  if (policy.tsaCertsPem === undefined) {
    s.timestamp = 'not_checked';
    t.notChecked.push('the RFC 3161 token of the checkpoint: give --tsa-certs PEM (the TSA chain) to check it');
    return;
  }
  if (!der || s.note === null) {
    t.fail(name, 'timestamp', der ? 'the timestamp comes before the checkpoint' : 'not base64');
    return;
  }
  const { checkpointTimestampDigest, verifyTimeStampResponse } = await deps.timestamp();
  let digest: Buffer | null = null;
  try {
    digest = checkpointTimestampDigest(s.note);
  } catch {
    digest = null;
  }
  const r = digest === null ? null : await verifyTimeStampResponse(der, digest, { certsPem: policy.tsaCertsPem });
  if (r === null) t.fail(name, 'timestamp', 'the checkpoint has no body to timestamp');
  else if (r.ok) {
    s.timestamp = { gen_time: r.genTime, tsa: r.tsaName };
    t.pass('timestamp');
  } else t.fail(name, 'timestamp', `${r.code}: ${r.message}`);
}

/**
 * `log/nostr`: the anchored checkpoint `note` is signed by --vkey and is an
 * earlier state of the pack's checkpoint (`nostr_consistency`: the RFC 6962
 * consistency proof from it to the pack's root), and the event is a valid
 * NIP-01 event (`nostr_event`, `nostr_signature`) whose content is that
 * checkpoint (`nostr_content`), by --nostr-pubkey (`nostr_pubkey`; listed as
 * not checked without it).
 */
export function nostrMember(s: CheckpointState, name: string, m: Obj, policy: PackPolicy, t: Tally): void {
  if (s.cp === null || s.note === null) {
    t.fail(name, 'format', 'the Nostr anchor comes before the checkpoint');
    return;
  }
  const note = typeof m.note === 'string' ? m.note : '';
  let anchored: Checkpoint;
  try {
    anchored = verifyCheckpoint(note, [policy.log], policy.log.name).checkpoint;
  } catch (e) {
    t.fail(name, 'nostr_content', `the anchored checkpoint is not signed by --vkey: ${isTlogError(e) ? `${e.code}: ${e.message}` : (e as Error).message}`);
    return;
  }
  const proof = Array.isArray(m.consistency) ? m.consistency.map(b64) : null;
  try {
    if (m.size !== anchored.size || anchored.size > s.cp.size || proof === null || proof.some((h) => h === null || h.length !== 32)) throw new Error(`size ${String(m.size)} and consistency proof do not describe an earlier checkpoint of size ${anchored.size} (the pack's is ${s.cp.size})`);
    if (anchored.size === s.cp.size) {
      if (!anchored.rootHash.equals(s.cp.rootHash)) throw new Error('the anchored checkpoint has the pack checkpoint\'s size and another root');
    } else verifyConsistency(anchored.size, s.cp.size, proof as Buffer[], anchored.rootHash, s.cp.rootHash);
    t.pass('nostr_consistency');
  } catch (e) {
    t.fail(name, 'nostr_consistency', `the anchored checkpoint is not an earlier state of the pack's: ${(e as Error).message}`);
    return;
  }
  const r = checkNostrAnchor(m.event, note, policy.nostrPubkey);
  if (!r.ok) {
    t.fail(name, r.code, r.detail);
    return;
  }
  t.pass('nostr_signature');
  t.pass('nostr_content');
  if (r.pubkey_checked) t.pass('nostr_pubkey');
  else t.notChecked.push(`the publisher of Nostr event ${r.event_id} (${r.pubkey}): give --nostr-pubkey HEX (the ledger's publisher key) to check it`);
  s.nostr = { event_id: r.event_id, pubkey: r.pubkey, created_at: r.created_at, size: anchored.size, pubkey_checked: r.pubkey_checked };
}
