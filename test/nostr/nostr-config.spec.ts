/**
 * NOSTR_RELAYS / NOSTR_KEY_FILE parsing (src/log/nostr-config.ts, issue 33):
 * what starts, and what stops the start naming the variable.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPublicKey, nip19 } from 'nostr-tools';
import { createNostrKeyFile, parseNostrSettings, publicRelayUrl } from '../../src/log/nostr-config';

describe('Nostr settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aer1-nostr-cfg-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const key = join(dir, 'nostr.key');
  let made: { pubkey: string; npub: string };
  beforeAll(() => {
    made = createNostrKeyFile(key);
  });

  it('creates a key file (64 hex, mode 0600) and never overwrites it', () => {
    const hex = readFileSync(key, 'utf8');
    expect(hex).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(made.pubkey).toBe(getPublicKey(Uint8Array.from(Buffer.from(hex.trim(), 'hex'))));
    expect(made.npub).toBe(nip19.npubEncode(made.pubkey));
    expect(() => createNostrKeyFile(key)).toThrow(`${key} already exists; not overwriting a key`);
  });

  it('reads the relays and the key; nothing set is no anchoring', () => {
    expect(parseNostrSettings(undefined, undefined, false, 0)).toBeNull();
    const s = parseNostrSettings(' wss://relay.one.example , wss://relay.two.example/path,wss://relay.one.example ', key, false, 60_000);
    expect(s).toMatchObject({ relays: ['wss://relay.one.example', 'wss://relay.two.example/path'], pubkey: made.pubkey, npub: made.npub, intervalMs: 60_000 });
    const nsec = join(dir, 'nsec.key');
    writeFileSync(nsec, nip19.nsecEncode(s!.secretKey));
    expect(parseNostrSettings('wss://r.example', nsec, false, 0)?.pubkey).toBe(made.pubkey);
    expect(parseNostrSettings('ws://127.0.0.1:7000', key, true, 0)?.relays).toEqual(['ws://127.0.0.1:7000']);
  });

  it.each([
    ['wss://r.example', undefined, 'NOSTR_RELAYS is set but NOSTR_KEY_FILE'],
    [undefined, 'KEY', 'NOSTR_KEY_FILE is set but NOSTR_RELAYS is not'],
    ['ws://127.0.0.1:7000', 'KEY', 'is ws:// (unencrypted)'],
    ['https://r.example', 'KEY', 'https://r.example is not a wss:// URL'],
    ['wss://user:pw@r.example', 'KEY', 'r.example carries credentials'],
    ['not a url', 'KEY', '"not a url" is not a URL'],
    [' , ', 'KEY', 'NOSTR_RELAYS names no relay'],
    ['21 relays', 'KEY', 'names 21 relays; at most 20'],
    ['wss://r.example', 'MISSING', 'cannot be read: ENOENT'],
    ['wss://r.example', 'BAD', 'must hold a secp256k1 secret key'],
  ])('refuses NOSTR_RELAYS=%s with key %s: %s', (label, file, why) => {
    const relays = label === '21 relays' ? Array.from({ length: 21 }, (_, i) => `wss://r${i}.example`).join(',') : label;
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, 'not a key\n');
    const path = file === 'KEY' ? key : file === 'BAD' ? bad : file === 'MISSING' ? join(dir, 'missing.key') : undefined;
    expect(() => parseNostrSettings(relays, path, false, 0)).toThrow(why);
  });
});

describe('a relay URL as shown publicly (/health, anchors)', () => {
  it.each([
    ['wss://relay.example.com', 'wss://relay.example.com'],
    ['wss://relay.example.com/', 'wss://relay.example.com/'],
    ['wss://paid.example.com/ws?token=s3cret', 'wss://paid.example.com/ws?\u2026'],
    ['wss://paid.example.com/#s3cret', 'wss://paid.example.com/?\u2026'],
    ['ws://127.0.0.1:7777', 'ws://127.0.0.1:7777'],
  ])('%s -> %s', (url, shown) => {
    expect(publicRelayUrl(url)).toBe(shown);
  });
});
