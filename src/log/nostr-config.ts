/**
 * NOSTR_RELAYS / NOSTR_KEY_FILE / NOSTR_ALLOW_INSECURE / NOSTR_INTERVAL_MS
 * (issue 33), parsed and checked once at start: a bad value stops the
 * process with a message naming the variable. Keys by nostr-tools.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { generateSecretKey, getPublicKey, nip19 } from 'nostr-tools';

/** Relays one ledger publishes to, at most. */
export const MAX_NOSTR_RELAYS = 20;

/** Nostr anchoring, when configured: the relays, the publisher's secret key (never logged or served) and public key, the interval. */
export type NostrSettings = {
  relays: readonly string[];
  secretKey: Uint8Array;
  /** The publisher key: x-only secp256k1 public key, 64 lowercase hex (NIP-01 `pubkey`). */
  pubkey: string;
  /** NIP-19 `npub` form of {@link pubkey}. */
  npub: string;
  /** Publish a new checkpoint at most this often, in ms (0: every new one). */
  intervalMs: number;
} | null;

/** The secret key in a key file: 64 hex, or a NIP-19 `nsec1...`. Throws naming the file. */
export function readNostrKeyFile(path: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new Error(`NOSTR_KEY_FILE ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (/^[0-9a-fA-F]{64}$/.test(text)) {
    const key = new Uint8Array(Buffer.from(text, 'hex'));
    try {
      getPublicKey(key);
    } catch {
      throw new Error(`NOSTR_KEY_FILE ${path} does not hold a valid secp256k1 secret key`);
    }
    return key;
  }
  if (text.startsWith('nsec1')) {
    try {
      const d = nip19.decode(text);
      if (d.type === 'nsec') return d.data;
    } catch {
      // fall through to the error below
    }
  }
  throw new Error(`NOSTR_KEY_FILE ${path} must hold a secp256k1 secret key: 64 hex characters or nsec1... (create one with: npm run ledger -- create-nostr-key --out FILE)`);
}

/**
 * A relay URL as it may be shown to anyone (/health, anchors, pages): its
 * query and fragment (where a paid relay's access token goes) replaced by
 * `?…`. The full URL stays in the configuration and the database.
 */
export function publicRelayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.search && !u.hash) return url;
    return `${u.protocol}//${u.host}${u.pathname}?\u2026`;
  } catch {
    return url;
  }
}

/**
 * Parse NOSTR_RELAYS (comma-separated `wss://` URLs; `ws://` only with
 * NOSTR_ALLOW_INSECURE) and NOSTR_KEY_FILE; null when neither is set. Throws
 * an Error naming the variable for: one set without the other, a URL that
 * does not parse, has another scheme or carries credentials, more than
 * {@link MAX_NOSTR_RELAYS} relays, or a key file that is not a key.
 */
export function parseNostrSettings(relays: string | undefined, keyFile: string | undefined, allowInsecure: boolean, intervalMs: number): NostrSettings {
  const r = relays?.trim() || undefined;
  const f = keyFile?.trim() || undefined;
  if (!r && !f) return null;
  if (!r) throw new Error('NOSTR_KEY_FILE is set but NOSTR_RELAYS is not');
  if (!f) throw new Error('NOSTR_RELAYS is set but NOSTR_KEY_FILE (the publisher key: npm run ledger -- create-nostr-key --out FILE) is not');
  const urls = [...new Set(r.split(',').map((s) => s.trim()).filter((s) => s !== ''))].map((s) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      throw new Error(`NOSTR_RELAYS: ${JSON.stringify(s.slice(0, 200))} is not a URL`);
    }
    if (u.protocol === 'ws:' && !allowInsecure) throw new Error(`NOSTR_RELAYS: ${s} is ws:// (unencrypted); use wss://, or set NOSTR_ALLOW_INSECURE=true for a relay on this host`);
    if (u.protocol !== 'wss:' && u.protocol !== 'ws:') throw new Error(`NOSTR_RELAYS: ${s} is not a wss:// URL`);
    if (u.username || u.password) throw new Error(`NOSTR_RELAYS: ${u.host} carries credentials in its URL`);
    return s;
  });
  if (urls.length === 0) throw new Error('NOSTR_RELAYS names no relay');
  if (urls.length > MAX_NOSTR_RELAYS) throw new Error(`NOSTR_RELAYS names ${urls.length} relays; at most ${MAX_NOSTR_RELAYS}`);
  const secretKey = readNostrKeyFile(f);
  const pubkey = getPublicKey(secretKey);
  return { relays: urls, secretKey, pubkey, npub: nip19.npubEncode(pubkey), intervalMs };
}

/** Write a new publisher key (64 hex, mode 0600) to `out`, never overwriting; its public key in hex and npub form. */
export function createNostrKeyFile(out: string): { pubkey: string; npub: string } {
  const sk = generateSecretKey();
  let fd: number;
  try {
    fd = openSync(out, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`${out} already exists; not overwriting a key`);
    throw new Error(`cannot create ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    writeSync(fd, `${Buffer.from(sk).toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const pubkey = getPublicKey(sk);
  return { pubkey, npub: nip19.npubEncode(pubkey) };
}
