/**
 * C2SP tlog-tiles served by the API and written to TILES_DIR, on SQLite and
 * PostgreSQL, read with the independent reader of test/reference (written
 * from the spec; no shared code with src/): at checkpoints of sizes 1, 3,
 * 255, 256, 257 and 600 every tile and bundle the spec names is served,
 * byte-exact, with its caching headers, and the folder holds the same
 * bytes; partial tiles grow into full ones without a byte of their prefix
 * changing; `GET /tile/0/000` of 256 leaves is the 256 leaf hashes;
 * withheld leaves are zero-length entries. Then the tile bandwidth budget,
 * apart from the public read budget.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventHashInput, StoredEvent, SYSTEM } from '../../src/core/ledger/event-hash';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService, NO_CONCURRENCY_CHECK } from '../../src/ledger/ledger.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { refLeaf } from '../reference/rfc6962';
import { refBundleMismatches, refDecodeBundle, refTileBytes, refTilesOf } from '../reference/tlog-tiles';
import { freshReceipt } from '../reliability/helpers';

/** GET a binary answer with supertest: the body as bytes. */
async function getBytes(t: TestApp, path: string): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
  const r = await t.http
    .get(path)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
  return { status: r.status, body: r.body as Buffer, headers: r.headers as Record<string, string> };
}

/** Append `n` events of a type no anonymous reader may read the content of (TestBulkAppended); in format 3 their leaves are public all the same. */
async function bulk(t: TestApp, n: number): Promise<void> {
  const ledger = t.app.get(LedgerService);
  await t.app.get(DatabaseService).write((tx) => ledger.append(tx, 'test:bulk', NO_CONCURRENCY_CHECK, Array.from({ length: n }, (_, i) => ({ type: 'TestBulkAppended', data: { i } })), SYSTEM));
}

async function receipt(t: TestApp): Promise<void> {
  const r = freshReceipt();
  const res = await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(r.text);
  expect(res.status).toBe(201);
}

/** Leaf bytes and types of every stored event, computed in the test. */
async function storedLeaves(t: TestApp): Promise<{ leaves: Buffer[]; types: string[]; formats: number[] }> {
  const rows = await t.app.get(DatabaseService).query<StoredEvent>('SELECT * FROM events ORDER BY position');
  return {
    leaves: rows.map((e) => Buffer.from(eventHashInput({ ...e, position: Number(e.position), stream_position: Number(e.stream_position) }), 'utf8')),
    types: rows.map((e) => e.type),
    formats: rows.map((e) => Number(e.format)),
  };
}

describe.each(DIALECTS)('tlog-tiles on %s', (dialect) => {
  jest.setTimeout(180_000);
  let t: TestApp;
  let dir: string;
  /** Bytes served so far per `<level>/<n>`, to check partial tiles only grow. */
  const seen = new Map<string, Buffer>();
  let prefixChecks = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-tiles-'));
    t = await startApp(dialect, { TILES_DIR: dir });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sign, then check every resource the spec names for the new size against the reference and the folder. */
  async function checkAt(size: number): Promise<void> {
    await t.app.get(CheckpointSigner).tick();
    const cp = await t.http.get('/checkpoint');
    expect(cp.text.split('\n')[1]).toBe(String(size));
    expect(readFileSync(join(dir, 'checkpoint'), 'utf8')).toBe(cp.text);
    const { leaves, types, formats } = await storedLeaves(t);
    expect(leaves).toHaveLength(size);
    const level0 = new Map<number, Buffer>();
    const tiles = refTilesOf(size);
    for (const tile of [...tiles.filter((x) => x.level >= 0), ...tiles.filter((x) => x.level < 0)]) {
      const r = await getBytes(t, `/${tile.path}`);
      expect([tile.path, r.status, r.headers['content-type']]).toEqual([tile.path, 200, 'application/octet-stream']);
      expect(r.headers['cache-control']).toBe(tile.w === 256 ? 'public, max-age=31536000, immutable' : 'public, max-age=10');
      expect(readFileSync(join(dir, tile.path)).equals(r.body)).toBe(true);
      if (tile.level >= 0) {
        expect(r.body.equals(refTileBytes(leaves, tile.level, tile.n, tile.w))).toBe(true);
        if (tile.level === 0) level0.set(tile.n, r.body);
      } else {
        // A spec client: every entry must hash to its level-0 hash, except the zero-length entries of withheld leaves.
        const entries = refDecodeBundle(r.body);
        // Format 3 leaves hold no content and are never withheld (issue 29); only a format 1/2 leaf of such a type would be.
        const withheld = entries.flatMap((_, i) => (types[tile.n * 256 + i] === 'TestBulkAppended' && formats[tile.n * 256 + i] !== 3 ? [i] : []));
        expect(refBundleMismatches(r.body, level0.get(tile.n) as Buffer)).toEqual(withheld);
        entries.forEach((e, i) => expect(e.equals(withheld.includes(i) ? Buffer.alloc(0) : leaves[tile.n * 256 + i])).toBe(true));
      }
      const key = `${tile.level}/${tile.n}`;
      const before = seen.get(key);
      if (before) {
        expect(r.body.subarray(0, before.length).equals(before)).toBe(true);
        prefixChecks++;
      }
      seen.set(key, r.body);
    }
  }

  it('serves every tile and bundle of sizes 1, 3, 255, 256, 257 and 600 byte-exact, and writes them to TILES_DIR', async () => {
    await receipt(t);
    await checkAt(1);
    await receipt(t);
    await receipt(t);
    await checkAt(3);
    await bulk(t, 252);
    await checkAt(255);
    await bulk(t, 1);
    await checkAt(256);
    await receipt(t);
    await checkAt(257);
    await bulk(t, 343);
    await checkAt(600);
    expect(prefixChecks).toBeGreaterThanOrEqual(8);
    expect((await t.http.get('/health')).body.details.log.tiles_dir).toEqual({ checkpoint_size: 600 });
  });

  it('GET /tile/0/000 of the 256-leaf tree is the 256 leaf hashes; a partial tile of an earlier checkpoint stays served', async () => {
    const { leaves } = await storedLeaves(t);
    const r = await getBytes(t, '/tile/0/000');
    expect(r.body.equals(Buffer.concat(leaves.slice(0, 256).map(refLeaf)))).toBe(true);
    const early = await getBytes(t, '/tile/0/000.p/3');
    expect([early.status, early.body.equals(r.body.subarray(0, 96))]).toEqual([200, true]);
  });

  it('answers 404 beyond the checkpoint and 400 for a path not in the spec encoding', async () => {
    for (const p of ['/tile/0/002', '/tile/0/002.p/89', '/tile/1/000', '/tile/2/000.p/1', '/tile/entries/003.p/1']) {
      const r = await t.http.get(p);
      expect([p, r.status, r.body.error]).toEqual([p, 404, 'tile_not_found']);
    }
    for (const p of ['/tile/0/2', '/tile/00/000', '/tile/0/000.p/256', '/tile/entries/x000/000', '/tile/0/000.p/']) {
      const r = await t.http.get(p);
      expect([p, r.status, r.body.error]).toEqual([p, 400, 'tile_path_invalid']);
    }
    expect((await t.http.get('/leaf/000')).body.error).toBe('leaf_not_found');
  });

  it('a public leaf over 65,535 bytes is a zero-length entry, served whole at leaf/<N> (API and folder)', async () => {
    // A public event type whose projection accepts any id (it marks nothing superseded), written under a writer name of
    // 70,000 characters: the leaf names its writer (formats 2 and 3), so it is over 65,535 bytes whatever the format.
    const ledger = t.app.get(LedgerService);
    const big = { ...SYSTEM, name: 'n'.repeat(70_000) };
    await t.app.get(DatabaseService).write((tx) => ledger.append(tx, 'test:big', NO_CONCURRENCY_CHECK, [{ type: 'ReceiptCorrected', data: { id: 'none', superseded_by: 'none' } }], big));
    await t.app.get(CheckpointSigner).tick();
    const { leaves } = await storedLeaves(t);
    expect([leaves.length, leaves[600].length > 65_535]).toEqual([601, true]);
    const tile = (await getBytes(t, '/tile/0/002.p/89')).body;
    const bundle = (await getBytes(t, '/tile/entries/002.p/89')).body;
    expect(refBundleMismatches(bundle, tile)).toContain(88);
    expect(refDecodeBundle(bundle)[88].length).toBe(0);
    const whole = await getBytes(t, '/leaf/600');
    expect([whole.status, whole.headers['cache-control'], whole.body.equals(leaves[600])]).toEqual([200, 'public, max-age=31536000, immutable', true]);
    expect(refLeaf(whole.body).equals(tile.subarray(88 * 32))).toBe(true);
    expect(readFileSync(join(dir, 'leaf/600')).equals(leaves[600])).toBe(true);
    expect(readFileSync(join(dir, 'tile/entries/002.p/89')).equals(bundle)).toBe(true);
    // A leaf that fits its bundle, or a withheld one, is not served there.
    expect((await t.http.get('/leaf/599')).status).toBe(404);
  });
});

describe('tile bandwidth budget (TILE_BANDWIDTH_KIB_PER_MINUTE), apart from the public read budget; a TILES_DIR that cannot be written', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-tiles-bad-'));
    writeFileSync(join(dir, 'a-file'), 'not a folder');
    t = await startApp('sqlite', { TILE_BANDWIDTH_KIB_PER_MINUTE: '16', VERIFY_RATE_LIMIT: '1', TILES_DIR: join(dir, 'a-file', 'copy') });
    await bulk(t, 256);
    await t.app.get(CheckpointSigner).tick();
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a static copy that cannot be written is shown in /health (no path, status degraded, still 200) and stops nothing', async () => {
    const h = await t.http.get('/health');
    expect([h.status, h.body.status]).toEqual([200, 'degraded']);
    const log = h.body.details.log;
    expect(log).toMatchObject({ signing: 'active', checkpoint_size: 256, tiles_dir: { checkpoint_size: null, last_error: { message: expect.stringContaining('TILES_DIR') } } });
    expect(log.tiles_dir.last_error.message).not.toContain(dir);
  });

  it('serves 16 KiB of tiles a minute to a client, then 429 bandwidth_exceeded; tiles spend none of the read budget', async () => {
    expect((await t.http.get('/tile/0/000')).status).toBe(200);
    expect((await t.http.get('/tile/0/000')).status).toBe(200);
    const refused = await t.http.get('/tile/0/000');
    expect([refused.status, refused.body.error]).toEqual([429, 'bandwidth_exceeded']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // VERIFY_RATE_LIMIT=1: the first public read of the minute is still there.
    expect((await t.http.get('/checkpoint')).status).toBe(200);
    expect((await t.http.get('/checkpoint')).status).toBe(429);
  });
});
