/**
 * Nostr anchors of checkpoints (AER-1 draft -07 S10, issue 33): one NIP-01
 * event per anchored checkpoint, signed by the ledger's publisher key
 * (BIP-340 Schnorr over secp256k1, by nostr-tools), whose `content` is the
 * checkpoint note exactly as `GET /checkpoint` served it and whose tags name
 * the origin, the size and the root. Every receipt in that tree is covered
 * by it through its inclusion proof.
 *
 * This module builds the event template and checks a carried event offline
 * (what `aer1 log verify-proof` and `aer1 verify-pack` do). No cryptography
 * of our own: the event id (SHA-256 of the NIP-01 serialization) and the
 * signature are checked by nostr-tools' `verifyEvent`.
 */
import { verifyEvent, type Event as NostrEvent, type EventTemplate } from 'nostr-tools';

export type { NostrEvent };

/** The event kind: 1 (NIP-01 text note), the kind public relays keep most widely. */
export const ANCHOR_EVENT_KIND = 1;
/** The `t` tag value of every anchor event (single-letter tags are indexed by relays: filter `{"#t": ["aer1-checkpoint"]}`). */
export const ANCHOR_TOPIC = 'aer1-checkpoint';
/** The name of the per-receipt envelope binding a receipt to an anchored checkpoint. */
export const RECEIPT_ANCHOR_ENVELOPE = 'aer1-receipt-anchor/1';

/** Failure codes of an offline Nostr anchor check. */
export type NostrCheckCode = 'nostr_event' | 'nostr_signature' | 'nostr_content' | 'nostr_pubkey';

/** What a carried anchor event establishes, or why it does not. */
export type NostrAnchorCheck =
  | { ok: true; event_id: string; pubkey: string; created_at: number; pubkey_checked: boolean }
  | { ok: false; code: NostrCheckCode; detail: string };

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/**
 * The unsigned event for the checkpoint `note` (its first three lines are
 * origin, size, base64 root: c2sp.org/tlog-checkpoint), created at
 * `createdAt` (POSIX seconds).
 */
export function anchorEventTemplate(note: string, createdAt: number): EventTemplate {
  const [origin, size, root] = note.split('\n', 3);
  return { kind: ANCHOR_EVENT_KIND, created_at: createdAt, content: note, tags: [['t', ANCHOR_TOPIC], ['origin', origin], ['size', size], ['root', root]] };
}

/** The checkpoint body of a note: its text up to and including the line before the blank line. */
export function checkpointBody(note: string): string | null {
  const end = note.indexOf('\n\n');
  return end < 0 ? null : note.slice(0, end + 1);
}

/** The value of the first tag named `name`, or null. */
function tag(e: NostrEvent, name: string): string | null {
  const t = e.tags.find((x) => x[0] === name);
  return t && typeof t[1] === 'string' ? t[1] : null;
}

/** True when `v` has the NIP-01 event shape (lowercase hex id/pubkey/sig, integer created_at and kind, string tags and content). */
export function isNostrEvent(v: unknown): v is NostrEvent {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.id === 'string' &&
    HEX64.test(e.id) &&
    typeof e.pubkey === 'string' &&
    HEX64.test(e.pubkey) &&
    typeof e.sig === 'string' &&
    HEX128.test(e.sig) &&
    Number.isSafeInteger(e.created_at) &&
    Number.isSafeInteger(e.kind) &&
    typeof e.content === 'string' &&
    Array.isArray(e.tags) &&
    e.tags.every((t) => Array.isArray(t) && t.every((s) => typeof s === 'string'))
  );
}

/**
 * Check a carried anchor event against the checkpoint `note` it is said to
 * anchor (the proof's or pack's note, whose log signature the caller has
 * checked): the event's shape (`nostr_event`), its id and BIP-340 signature
 * (`nostr_signature`), that its content is that checkpoint (the same
 * checkpoint body, byte for byte; cosignature lines may differ) and its
 * origin/size/root tags agree (`nostr_content`), and, when `trustedPubkey`
 * (64 hex) is given, that it is that publisher's (`nostr_pubkey`). Without
 * `trustedPubkey` the publisher is not checked (`pubkey_checked` false):
 * anyone can sign an event.
 */
export function checkNostrAnchor(event: unknown, note: string, trustedPubkey?: string): NostrAnchorCheck {
  if (!isNostrEvent(event)) return { ok: false, code: 'nostr_event', detail: 'the anchor is not a NIP-01 event (id, pubkey, created_at, kind, tags, content, sig)' };
  // A fresh object: nostr-tools caches a verified flag on the object it is given.
  const copy: NostrEvent = { id: event.id, pubkey: event.pubkey, created_at: event.created_at, kind: event.kind, tags: event.tags.map((t) => [...t]), content: event.content, sig: event.sig };
  if (!verifyEvent(copy)) return { ok: false, code: 'nostr_signature', detail: `event ${event.id}: its id is not the hash of its content or its signature is not by ${event.pubkey} (BIP-340)` };
  const body = checkpointBody(note);
  if (body === null || checkpointBody(event.content) !== body) return { ok: false, code: 'nostr_content', detail: `event ${event.id}: its content is not the checkpoint ${note.split('\n', 2).join(' ')}` };
  const [origin, size, root] = body.split('\n', 3);
  if (tag(event, 'origin') !== origin || tag(event, 'size') !== size || tag(event, 'root') !== root) return { ok: false, code: 'nostr_content', detail: `event ${event.id}: its origin, size or root tag does not name the checkpoint it carries` };
  if (trustedPubkey !== undefined && event.pubkey !== trustedPubkey.toLowerCase()) return { ok: false, code: 'nostr_pubkey', detail: `event ${event.id} is signed by ${event.pubkey}, not by the trusted publisher ${trustedPubkey}` };
  return { ok: true, event_id: event.id, pubkey: event.pubkey, created_at: event.created_at, pubkey_checked: trustedPubkey !== undefined };
}
