/**
 * Nostr anchoring (issue 33) end to end, on SQLite and PostgreSQL, against
 * real relays started here (@nostr-relay/core in this process: test/nostr/relay.ts):
 * the ledger publishes the served checkpoint as a NIP-01 event; it is
 * fetched back from the relay by id and by author with a REQ and checked
 * independently (SHA-256 id, @noble/curves BIP-340); a relay that refuses
 * (OK false) or is down is reported per relay in /health and the anchors
 * endpoint, retried with backoff, and never blocks checkpoints or writes;
 * the receipt answer and page carry the anchor with its envelope; the
 * proof file and the evidence pack carry the event and `aer1` checks it
 * offline, failing forged events by name. Run `npm run build` first (the
 * CLI runs from dist).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import Ajv from 'ajv';
import { schnorr } from '@noble/curves/secp256k1';
import { finalizeEvent, generateSecretKey, nip19 } from 'nostr-tools';
import WebSocket from 'ws';
import { anchorEventTemplate } from '../../src/core/nostr/anchor';
import { PackWriter } from '../../src/core/pack/format';
import { DatabaseService } from '../../src/database/database.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { NostrPublisher } from '../../src/log/nostr-publisher';
import { buildTimeline, receiptFor } from '../coverage/fixtures';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { freshReceipt, waitUntil } from '../reliability/helpers';
import { aer1, requireBuild, tempDir } from '../witness/helpers';
import { startRelay, TestRelay } from './relay';

jest.setTimeout(60_000);

type Ev = { id: string; pubkey: string; created_at: number; kind: number; tags: string[][]; content: string; sig: string };

/** Send one REQ to `url` and collect the events until EOSE. */
function req(url: string, filter: Record<string, unknown>): Promise<Ev[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const got: Ev[] = [];
    const timer = setTimeout(() => reject(new Error('no EOSE')), 5000);
    ws.on('open', () => ws.send(JSON.stringify(['REQ', 'q', filter])));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as unknown[];
      if (m[0] === 'EVENT') got.push(m[2] as Ev);
      if (m[0] === 'EOSE') {
        clearTimeout(timer);
        ws.close();
        resolve(got);
      }
    });
    ws.on('error', reject);
  });
}

describe.each(DIALECTS)('Nostr anchoring (%s)', (dialect) => {
  const tmp = tempDir('aer1-nostr-');
  let good: TestRelay;
  let refusing: TestRelay;
  let down: TestRelay | null = null;
  let downPort = 0;
  let downUrl = '';
  let t: TestApp;
  let pubkey = '';
  let receiptId = '';
  let anchored = 0;

  beforeAll(async () => {
    requireBuild();
    good = await startRelay();
    refusing = await startRelay();
    refusing.refuse = true;
    const gone = await startRelay();
    downPort = gone.port;
    downUrl = gone.url;
    await gone.close();
    const keyFile = join(tmp.path, `nostr-${dialect}.key`);
    // The operator's command: prints the public key in hex, then npub.
    const made = spawnSync(process.execPath, [join(__dirname, '../../dist/src/ledger-cli.js'), 'create-nostr-key', '--out', keyFile], { encoding: 'utf8' });
    expect(made.status).toBe(0);
    const [hex, npub] = made.stdout.trim().split('\n');
    expect([hex, npub]).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/), nip19.npubEncode(hex)]);
    pubkey = hex;
    t = await startApp(dialect, { NOSTR_RELAYS: `${good.url},${refusing.url},${downUrl}`, NOSTR_KEY_FILE: keyFile, NOSTR_ALLOW_INSECURE: 'true', NOSTR_INTERVAL_MS: '0' });
  });

  afterAll(async () => {
    await t?.close();
    await good?.close();
    await refusing?.close();
    await down?.close();
    tmp.cleanup();
  });

  /** Validate `body` against the documented component schema `name` (/docs-json). */
  async function documented(name: string, body: unknown): Promise<string> {
    const doc = (await t.http.get('/docs-json')).body as { components: Record<string, unknown> };
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile({ $ref: `#/components/schemas/${name}`, components: doc.components });
    return validate(body) ? 'valid' : new Ajv().errorsText(validate.errors);
  }

  const post = (text: string) => t.http.post('/api/receipts').set('authorization', `Bearer ${t.keys.producer}`).set('content-type', 'application/json').send(text);

  it('publishes the served checkpoint; the relay gives it back by id and author; the signature checks independently', async () => {
    const r = freshReceipt();
    receiptId = r.id;
    expect((await post(r.text)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    const served = (await t.http.get('/checkpoint')).text;
    anchored = Number(served.split('\n')[1]);
    expect(anchored).toBeGreaterThanOrEqual(1);
    await t.app.get(NostrPublisher).tick();

    const a = await t.http.get(`/api/ledger/checkpoints/${anchored}/anchors`);
    expect(a.status).toBe(200);
    expect(await documented('CheckpointAnchors', a.body)).toBe('valid');
    const n = a.body.anchors.find((x: { type: string }) => x.type === 'nostr');
    expect(n).toMatchObject({ type: 'nostr', size: anchored, publisher_key: pubkey, relays: [good.url], published: true, published_at: expect.any(String) });
    expect(n.event.content).toBe(served);
    expect(n.relay_status).toEqual(
      expect.arrayContaining([
        { url: good.url, ok: true, message: '', at: expect.any(String), attempts: 1 },
        { url: refusing.url, ok: false, message: 'blocked: this relay does not accept events from this key', at: expect.any(String), attempts: 1 },
        expect.objectContaining({ url: downUrl, ok: false, attempts: 1 }),
      ]),
    );

    const [byId] = await req(good.url, { ids: [n.relay_event_id] });
    expect(byId).toEqual(n.event);
    expect(await req(good.url, { authors: [pubkey], '#t': ['aer1-checkpoint'] })).toEqual([n.event]);
    expect(refusing.events).toEqual([]);
    const id = createHash('sha256').update(JSON.stringify([0, byId.pubkey, byId.created_at, byId.kind, byId.tags, byId.content])).digest('hex');
    expect(byId.id).toBe(id);
    expect(schnorr.verify(byId.sig, id, pubkey)).toBe(true);
    expect(byId.tags).toEqual([['t', 'aer1-checkpoint'], ['origin', served.split('\n')[0]], ['size', String(anchored)], ['root', served.split('\n')[2]]]);

    const health = await t.http.get('/health');
    expect(await documented('Health', health.body)).toBe('valid');
    const h = health.body.details.log;
    expect(h.status).toBe('up');
    expect(h.nostr).toMatchObject({ publisher_key: pubkey, anchored_size: anchored, event_id: n.relay_event_id });
    const byUrl = Object.fromEntries(h.nostr.relays.map((x: { url: string }) => [x.url, x]));
    expect(byUrl[good.url]).toEqual({ url: good.url, status: 'ok', last_ok_size: anchored, last_ok_at: n.published_at });
    expect(byUrl[refusing.url]).toMatchObject({ status: 'failing', last_ok_size: null, last_error: expect.stringContaining('blocked: this relay does not accept'), retry_at: expect.any(String) });
    expect(byUrl[downUrl]).toMatchObject({ status: 'failing', last_error: expect.any(String) });

    // Retried with backoff: not again at once, then again after the first delay (1 s).
    await t.app.get(NostrPublisher).tick();
    const attempts = async (url: string): Promise<{ at: string; attempts: number }> =>
      (await t.http.get(`/api/ledger/checkpoints/${anchored}/anchors`)).body.anchors.find((x: { type: string }) => x.type === 'nostr').relay_status.find((x: { url: string }) => x.url === url);
    const first = await attempts(refusing.url);
    expect(first.attempts).toBe(1);
    await waitUntil('a second attempt at the refusing relay', 10_000, async () => (await attempts(refusing.url)).attempts >= 2);
    const second = await attempts(refusing.url);
    expect(Date.parse(second.at) - Date.parse(first.at)).toBeGreaterThanOrEqual(900);
  });

  it('keeps anchors and relay answers append-only in the database itself', async () => {
    const db = t.app.get(DatabaseService);
    for (const table of ['nostr_anchors', 'nostr_publications']) {
      await expect(db.unsafeQuery(`UPDATE ${table} SET size = size + 1`)).rejects.toThrow(/append-only/);
      await expect(db.unsafeQuery(`DELETE FROM ${table}`)).rejects.toThrow(/append-only/);
      if (dialect === 'postgres') await expect(db.query(`TRUNCATE ${table}`)).rejects.toThrow(/append-only/);
    }
  });

  it('retries a relay that was down or refused, with backoff, until it accepts; writes and checkpoints go on meanwhile', async () => {
    // Writes and checkpoints while two relays fail.
    expect((await post(freshReceipt().text)).status).toBe(201);
    const before = (await t.http.get('/checkpoint')).text;
    await t.app.get(CheckpointSigner).tick();
    expect(Number((await t.http.get('/checkpoint')).text.split('\n')[1])).toBe(Number(before.split('\n')[1]) + 1);
    down = await startRelay(downPort);
    refusing.refuse = false;
    await waitUntil('both relays to accept the newest anchor', 30_000, async () => {
      const h = (await t.http.get('/health')).body.details.log.nostr;
      return h.relays.every((x: { status: string }) => x.status === 'ok');
    });
    const h = (await t.http.get('/health')).body.details.log.nostr;
    const [ev] = await req(downUrl, { ids: [h.event_id] });
    expect(ev.id).toBe(h.event_id);
    const a = (await t.http.get(`/api/ledger/checkpoints/${h.anchored_size}/anchors`)).body.anchors.find((x: { type: string }) => x.type === 'nostr');
    expect(a.relays.sort()).toEqual([good.url, refusing.url, downUrl].sort());
    anchored = h.anchored_size;
  });

  it('the receipt answer and page carry the anchor with its envelope; the proof file carries the event and aer1 checks it offline', async () => {
    const v = await t.http.get(`/api/receipts/${receiptId}/verify`);
    expect(v.status).toBe(200);
    expect(v.body.verdict).toBe('valid');
    expect(v.body.anchors).toHaveLength(1);
    expect(await documented('ReceiptVerification', v.body)).toBe('valid');
    const a = v.body.anchors[0];
    expect(a).toMatchObject({ type: 'nostr', size: anchored, publisher_key: pubkey, published: true });
    expect(a.envelope).toEqual({
      format: 'aer1-receipt-anchor/1',
      receipt_id: receiptId,
      output_hash: v.body.output_hash,
      evidence_hash: v.body.log.leaf_hash,
      leaf_index: v.body.log.leaf_index,
      checkpoint: { origin: expect.any(String), size: anchored, root: a.event.tags.find((x: string[]) => x[0] === 'root')[1] },
      inclusion_proof: expect.any(Array),
      relay_event_id: a.relay_event_id,
    });
    const page = await t.http.get(`/run/${receiptId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Anchored on Nostr (S10)');
    expect(page.text).toContain(a.relay_event_id);
    expect(page.text).toContain('accepted (OK true)');

    const proof = await t.http.get(`/api/receipts/${receiptId}/proof`);
    expect(proof.body.nostr_event).toEqual(a.event);
    expect(await documented('LogProof', proof.body)).toBe('valid');
    expect(proof.body.tree_size).toBe(anchored);
    const vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    const pf = join(tmp.path, `proof-${dialect}.json`);
    writeFileSync(pf, JSON.stringify(proof.body));
    const ok = aer1(['log', 'verify-proof', pf, '--vkey', vkey, '--receipt', receiptId, '--nostr-pubkey', pubkey]);
    expect([ok.code, ok.err]).toEqual([0, '']);
    expect(ok.out).toMatch(/✓ nostr: Nostr event [0-9a-f]{64} by [0-9a-f]{64}, created .*signature valid \(BIP-340\)/);
    const unchecked = aer1(['log', 'verify-proof', pf, '--vkey', vkey]);
    expect(unchecked.code).toBe(0);
    expect(unchecked.out).toContain('(the Nostr anchor was not checked)');

    // Forged: the content changed (signature no longer matches), or re-signed by another key.
    const forged = (event: unknown, name: string): string => {
      const f = join(tmp.path, `${name}-${dialect}.json`);
      writeFileSync(f, JSON.stringify({ ...proof.body, nostr_event: event }));
      return f;
    };
    const changed = aer1(['log', 'verify-proof', forged({ ...a.event, content: a.event.content.replace(/\n\n[\s\S]*$/, '\n\n') }, 'changed'), '--vkey', vkey, '--nostr-pubkey', pubkey]);
    expect(changed.code).toBe(1);
    expect(changed.out).toMatch(/✗ nostr: .*\[nostr_signature\]/);
    const other = finalizeEvent(anchorEventTemplate(a.event.content, a.event.created_at), generateSecretKey());
    const otherKey = aer1(['log', 'verify-proof', forged(other, 'other-key'), '--vkey', vkey, '--nostr-pubkey', pubkey]);
    expect(otherKey.code).toBe(1);
    expect(otherKey.out).toMatch(/✗ nostr: .*\[nostr_pubkey\]/);
  });

  it('an evidence pack carries the anchor and aer1 verify-pack checks it; a forged event fails by name', async () => {
    const job = `nostr-job-${dialect}`;
    const [entry] = buildTimeline(job, [{ tool: 'open_ticket' }]);
    expect((await post(JSON.stringify(receiptFor(entry)))).status).toBe(201);
    const e = await t.http.post(`/api/jobs/${job}/entries`).set('authorization', `Bearer ${t.keys.producer}`).set('content-type', 'application/json').send(JSON.stringify(entry));
    expect(e.status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    await t.app.get(NostrPublisher).tick();
    const res = await t.http.get(`/api/jobs/${job}/evidence`).set('authorization', `Bearer ${t.keys.auditor}`).buffer(true).parse((r, cb) => {
      let s = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => (s += c));
      r.on('end', () => cb(null, s));
    });
    expect(res.status).toBe(200);
    const members = String(res.body).trimEnd().split('\n').map((l) => JSON.parse(l) as { member: string; [k: string]: unknown });
    const nostr = members.find((m) => m.member === 'log/nostr');
    expect(nostr).toMatchObject({ member: 'log/nostr', size: expect.any(Number), note: expect.any(String), consistency: expect.any(Array) });
    const pack = join(tmp.path, `pack-${dialect}.jsonl`);
    writeFileSync(pack, String(res.body));
    const vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey as string;
    const ok = aer1(['verify-pack', pack, '--vkey', vkey, '--nostr-pubkey', pubkey, '--json']);
    const report = JSON.parse(ok.out);
    expect(report.failures).toEqual([]);
    expect(report.nostr).toEqual({ event_id: (nostr!.event as Ev).id, pubkey, created_at: (nostr!.event as Ev).created_at, size: nostr!.size, pubkey_checked: true });
    expect(report.passed).toMatchObject({ nostr_signature: 1, nostr_content: 1, nostr_consistency: 1, nostr_pubkey: 1 });
    expect(ok.code).toBe(0);

    // The same pack with the event re-signed by another key, or its content changed: NOT VERIFIED, by name.
    const other = finalizeEvent(anchorEventTemplate(String(nostr!.note), (nostr!.event as Ev).created_at), generateSecretKey());
    for (const [event, code] of [
      [other, 'nostr_pubkey'],
      [{ ...(nostr!.event as Ev), content: `${String(nostr!.note)}\u2014 x AAAA\n`, tags: (nostr!.event as Ev).tags }, 'nostr_signature'],
    ] as [unknown, string][]) {
      const w = new PackWriter();
      let out = '';
      for (const m of members) if (m.member !== 'manifest' && !m.member.startsWith('manifest/')) out += w.member(m.member === 'log/nostr' ? { ...m, event } : m);
      const f = join(tmp.path, `forged-${code}-${dialect}.jsonl`);
      writeFileSync(f, out + w.finish());
      const bad = aer1(['verify-pack', f, '--vkey', vkey, '--nostr-pubkey', pubkey, '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.out).failures).toEqual([{ member: 'log/nostr', check: code, detail: expect.any(String) }]);
    }
  });
});
