/**
 * The offline check of a carried Nostr anchor (src/core/nostr/anchor.ts,
 * issue 33): a genuine event passes (and its id and BIP-340 signature also
 * check with @noble/curves directly, not through nostr-tools); a forged one
 * fails by name: content changed (`nostr_signature`), re-signed by another
 * key (`nostr_pubkey`), another checkpoint signed validly (`nostr_content`),
 * not an event (`nostr_event`).
 */
import { createHash } from 'node:crypto';
import { schnorr } from '@noble/curves/secp256k1';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools';
import { anchorEventTemplate, checkNostrAnchor } from '../../src/core/nostr/anchor';

const NOTE = 'ledger.test/aer1\n7\nq1zX0Ik8c2s1wIbm7bP2Kq7l3oPHzJc4lbdBSfJmM5k=\n\n\u2014 ledger.test/aer1 AAAAAWQ2bcE9kXq1Jb0t8m5eNwN9mGx6Zt8Ewn1cT2pEwQ6s8i4Yb+0v1nHx8uQ3yCqW7pQ9k1w0bG5h9JQw==\n';
const OTHER = 'ledger.test/aer1\n8\nz1zX0Ik8c2s1wIbm7bP2Kq7l3oPHzJc4lbdBSfJmM5k=\n\n\u2014 ledger.test/aer1 AAAAAWQ2bcE9kXq1Jb0t8m5eNwN9mGx6Zt8Ewn1cT2pEwQ6s8i4Yb+0v1nHx8uQ3yCqW7pQ9k1w0bG5h9JQw==\n';

describe('Nostr anchor check', () => {
  const sk = generateSecretKey();
  const pubkey = getPublicKey(sk);
  const event = finalizeEvent(anchorEventTemplate(NOTE, 1_790_000_000), sk);
  const plain = () => JSON.parse(JSON.stringify(event)) as typeof event;

  it('builds the event the issue names: the note as content, origin/size/root tags, signed by the key', () => {
    expect(event.content).toBe(NOTE);
    expect(event.kind).toBe(1);
    expect(event.tags).toEqual([['t', 'aer1-checkpoint'], ['origin', 'ledger.test/aer1'], ['size', '7'], ['root', 'q1zX0Ik8c2s1wIbm7bP2Kq7l3oPHzJc4lbdBSfJmM5k=']]);
    expect(event.pubkey).toBe(pubkey);
    // Independently of nostr-tools: the NIP-01 id is SHA-256 of [0, pubkey, created_at, kind, tags, content], and sig is BIP-340 over it.
    const id = createHash('sha256').update(JSON.stringify([0, event.pubkey, event.created_at, event.kind, event.tags, event.content])).digest('hex');
    expect(event.id).toBe(id);
    expect(schnorr.verify(event.sig, id, pubkey)).toBe(true);
  });

  it('passes a genuine event, with and without the trusted key', () => {
    expect(checkNostrAnchor(plain(), NOTE, pubkey)).toEqual({ ok: true, event_id: event.id, pubkey, created_at: 1_790_000_000, pubkey_checked: true });
    expect(checkNostrAnchor(plain(), NOTE)).toMatchObject({ ok: true, pubkey_checked: false });
    // The proof's note may carry more cosignature lines than the anchored one: the checkpoint body decides.
    expect(checkNostrAnchor(plain(), `${NOTE}\u2014 witness.example AAAAAQ==\n`, pubkey)).toMatchObject({ ok: true });
  });

  it('fails a forged event by name', () => {
    const changed = { ...plain(), content: OTHER };
    expect(checkNostrAnchor(changed, OTHER, pubkey)).toMatchObject({ ok: false, code: 'nostr_signature' });
    const badSig = { ...plain(), sig: plain().sig.replace(/^./, (c) => (c === '0' ? '1' : '0')) };
    expect(checkNostrAnchor(badSig, NOTE, pubkey)).toMatchObject({ ok: false, code: 'nostr_signature' });
    const otherKey = finalizeEvent(anchorEventTemplate(NOTE, 1_790_000_000), generateSecretKey());
    expect(checkNostrAnchor(JSON.parse(JSON.stringify(otherKey)), NOTE, pubkey)).toMatchObject({ ok: false, code: 'nostr_pubkey' });
    const otherCheckpoint = finalizeEvent(anchorEventTemplate(OTHER, 1_790_000_000), sk);
    expect(checkNostrAnchor(JSON.parse(JSON.stringify(otherCheckpoint)), NOTE, pubkey)).toMatchObject({ ok: false, code: 'nostr_content' });
    const lyingTags = finalizeEvent({ ...anchorEventTemplate(NOTE, 1_790_000_000), tags: [['size', '8']] }, sk);
    expect(checkNostrAnchor(JSON.parse(JSON.stringify(lyingTags)), NOTE, pubkey)).toMatchObject({ ok: false, code: 'nostr_content' });
    expect(checkNostrAnchor({ id: 'x' }, NOTE, pubkey)).toMatchObject({ ok: false, code: 'nostr_event' });
    expect(checkNostrAnchor(null, NOTE)).toMatchObject({ ok: false, code: 'nostr_event' });
  });
});
