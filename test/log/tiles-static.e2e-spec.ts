/**
 * The static copy of a 10,000-entry ledger, on SQLite (a file) and
 * PostgreSQL: TILES_DIR written by the API process as checkpoints are
 * signed (5,000 then 10,000), `npm run ledger -- export-tiles` (the built
 * CLI as a child process) writing the same files, the folder served by a
 * plain static file server (node:http in this file), and `aer1 log monitor
 * --tiles` / `aer1 log inclusion --tiles` verifying it: consistent from the
 * 5,000 checkpoint, the same proofs as the JSON API, a tampered tile refused.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize, relative } from 'node:path';
import { leafFromTiles } from '../../src/cli/tiles-client';
import { SYSTEM } from '../../src/core/ledger/event-hash';
import { parseCheckpoint, parseNote } from '../../src/core/tlog';
import { DatabaseService } from '../../src/database/database.service';
import { LedgerService, NO_CONCURRENCY_CHECK } from '../../src/ledger/ledger.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { cli } from '../cli/helpers';
import { DIALECTS, startApp, TestApp } from '../helpers/app';
import { freshReceipt, requireBuild } from '../reliability/helpers';

const LEDGER_CLI = join(__dirname, '../../dist/src/ledger-cli.js');

/** A plain static file server over `root` (GET only; 404 for anything missing); `tamper` may change a file's bytes as served. */
async function serveFolder(root: string, tamper?: (path: string, b: Buffer) => Buffer): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
    const file = join(root, path);
    if (req.method !== 'GET' || relative(root, file).startsWith('..')) return void res.writeHead(405).end();
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch {
      return void res.writeHead(404).end('not found');
    }
    res.writeHead(200, { 'Content-Type': path === 'checkpoint' ? 'text/plain; charset=utf-8' : 'application/octet-stream' }).end(tamper ? tamper(path, Buffer.from(body)) : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Every file below `dir`, as relative paths. */
function filesOf(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under)).flatMap((n) => {
    const rel = under ? `${under}/${n}` : n;
    return statSync(join(dir, rel)).isDirectory() ? filesOf(dir, rel) : [rel];
  });
}

describe.each(DIALECTS)('static tiles copy of a 10,000-entry ledger on %s', (dialect) => {
  jest.setTimeout(300_000);
  let t: TestApp;
  let work: string;
  let live: string;
  let exported: string;
  let vkey: string;
  let note5000: string;
  let served: { url: string; server: Server };
  let apiUrl: string;

  beforeAll(async () => {
    requireBuild(LEDGER_CLI);
    work = mkdtempSync(join(tmpdir(), 'aer1-tiles-static-'));
    live = join(work, 'live');
    exported = join(work, 'exported');
    t = await startApp(dialect, { TILES_DIR: live, ...(dialect === 'sqlite' ? { DATABASE_URL: `sqlite:${join(work, 'ledger.sqlite')}` } : {}) });
    const r = freshReceipt();
    expect((await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(r.text)).status).toBe(201);
    const ledger = t.app.get(LedgerService);
    const db = t.app.get(DatabaseService);
    const signer = t.app.get(CheckpointSigner);
    for (let made = 1; made < 10_000; ) {
      const n = Math.min(1000, (made < 5000 ? 5000 : 10_000) - made);
      await db.write((tx) => ledger.append(tx, 'test:bulk', NO_CONCURRENCY_CHECK, Array.from({ length: n }, (_, i) => ({ type: 'TestBulkAppended', data: { i: made + i } })), SYSTEM));
      made += n;
      if (made === 5000) {
        await signer.tick();
        note5000 = (await t.http.get('/checkpoint')).text;
      }
    }
    await signer.tick();
    vkey = (await t.http.get('/.well-known/aer1')).body.log_vkey;
    await t.app.listen(0, '127.0.0.1');
    apiUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const env: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'error', PUBLIC_BASE_URL: 'https://ledger.test' };
    delete env.LEDGER_SIGNING_KEY_FILE;
    const x = spawnSync(process.execPath, [LEDGER_CLI, 'export-tiles', '--out', exported], { env, encoding: 'utf8', timeout: 120_000 });
    expect([x.status, x.stderr]).toEqual([0, expect.any(String)]);
    expect(JSON.parse(x.stdout)).toMatchObject({ out: exported, size: 10_000 });
    served = await serveFolder(exported);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (served ? served.server.close(() => resolve()) : resolve()));
    await t?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('export-tiles writes what TILES_DIR holds for the same checkpoint (the live folder also keeps the 5,000 partials)', () => {
    const files = filesOf(exported).sort();
    // 10,000 leaves: 39 full + 1 partial level-0 tiles, 1 partial level-1 tile, 40 bundles, the checkpoint.
    expect(files).toHaveLength(39 + 1 + 1 + 40 + 1);
    expect(files).toContain('tile/0/039.p/16');
    expect(files).toContain('tile/1/000.p/39');
    for (const f of files) expect([f, readFileSync(join(live, f)).equals(readFileSync(join(exported, f)))]).toEqual([f, true]);
    expect(filesOf(live)).toContain('tile/0/019.p/136');
    expect(parseCheckpoint(parseNote(readFileSync(join(exported, 'checkpoint'), 'utf8')).text).size).toBe(10_000);
  });

  it('export-tiles refuses a folder that holds another log\'s checkpoint (exit 1, nothing written)', () => {
    const other = join(work, 'other');
    mkdirSync(other);
    const note = `other.test\n5\n${Buffer.alloc(32, 7).toString('base64')}\n\n\u2014 other.test ${Buffer.alloc(68, 1).toString('base64')}\n`;
    writeFileSync(join(other, 'checkpoint'), note);
    const env: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'error', PUBLIC_BASE_URL: 'https://ledger.test' };
    delete env.LEDGER_SIGNING_KEY_FILE;
    const x = spawnSync(process.execPath, [LEDGER_CLI, 'export-tiles', '--out', other], { env, encoding: 'utf8', timeout: 120_000 });
    expect([x.status, x.stderr]).toEqual([1, expect.stringContaining('a checkpoint of another log (origin other.test, not ledger.test)')]);
    expect(filesOf(other)).toEqual(['checkpoint']);
  });

  it('aer1 log monitor --tiles verifies the copy: first use, then consistent from the 5,000 checkpoint', async () => {
    const fresh = join(work, 'fresh.state');
    const first = await cli(['log', 'monitor', '--tiles', served.url, '--vkey', vkey, '--state', fresh]);
    expect([first.code, first.out]).toEqual([0, expect.stringContaining('FIRST RUN')]);
    const state = join(work, 'from5000.state');
    writeFileSync(state, note5000);
    const grown = await cli(['log', 'monitor', '--tiles', served.url, '--vkey', vkey, '--state', state]);
    expect([grown.code, grown.out]).toEqual([0, expect.stringContaining('grew from size 5000 to 10000 (consistency proof verified)')]);
    // The API's own tile paths answer the same way.
    writeFileSync(state, note5000);
    const api = await cli(['log', 'monitor', '--tiles', apiUrl, '--vkey', vkey, '--state', state]);
    expect([api.code, api.out]).toEqual([0, expect.stringContaining('grew from size 5000 to 10000')]);
  });

  it('aer1 log inclusion --tiles proves a public leaf; the proofs equal the JSON API; a format 3 leaf of non-public content is in the copy all the same', async () => {
    const ok = await cli(['log', 'inclusion', '--tiles', served.url, '--vkey', vkey, '--index', '0']);
    expect([ok.code, ok.out]).toEqual([0, expect.stringContaining('Result: VERIFIED: leaf 0 is in log ledger.test at tree size 10000')]);
    const cp = parseCheckpoint(parseNote(readFileSync(join(exported, 'checkpoint'), 'utf8')).text);
    for (const i of [0, 255, 256, 4999, 5000, 9999]) {
      const fromCopy = await leafFromTiles({ base: served.url, timeoutS: 10 }, i, cp);
      const fromApi = (await t.http.get(`/api/ledger/proof/inclusion?index=${i}&tree_size=10000`)).body;
      expect([i, fromCopy.proof.map((h) => h.toString('base64')), fromCopy.leafHash.toString('base64')]).toEqual([i, fromApi.proof, fromApi.leaf_hash]);
    }
    // A leaf of a type whose content is not public: in format 3 the leaf holds no content, so the copy has it and it proves (issue 29).
    const contentless = await cli(['log', 'inclusion', '--tiles', served.url, '--vkey', vkey, '--index', '7']);
    expect([contentless.code, contentless.out]).toEqual([0, expect.stringContaining('Result: VERIFIED: leaf 7 is in log ledger.test at tree size 10000')]);
  });

  it('refuses a copy whose tile was changed (exit 2, never a false verdict)', async () => {
    const bad = await serveFolder(exported, (p, b) => {
      if (p === 'tile/0/019') b[100] ^= 1; // leaf 5000's tile: the consistency proof from 5000 reads it
      return b;
    });
    try {
      const state = join(work, 'tampered.state');
      writeFileSync(state, note5000);
      const r = await cli(['log', 'monitor', '--tiles', bad.url, '--vkey', vkey, '--state', state]);
      expect([r.code, r.err]).toEqual([2, expect.stringContaining('not the tree of the checkpoint')]);
      expect(readFileSync(state, 'utf8')).toBe(note5000);
    } finally {
      await new Promise<void>((resolve) => bad.server.close(() => resolve()));
    }
  });
});
