/**
 * Retention across two API processes (issue 29), on SQLite and PostgreSQL:
 * two `node dist/src/main.js` on one database and one Redis
 * (RETENTION_PERIOD=PT3S, checked every 500 ms) share one BullMQ job
 * scheduler; every payload past the period is erased exactly once (one
 * PayloadsErased event names it), whichever process wrote it or ran the job.
 */
import { Queue } from 'bullmq';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisOptionsFromUrl } from '../../src/verification-queue/queue-options';
import { RETENTION_QUEUE } from '../../src/erasure/retention.scheduler';
import { buildTimeline, receiptFor } from '../coverage/fixtures';
import { createPgDatabase, DIALECTS, testSigningKeyFile, testStateFile } from '../helpers/app';
import { adminKey, killAll, openDirect, ServerProcess, uniqueName, waitUntil } from '../reliability/helpers';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe.each(DIALECTS)('retention across two API processes on %s (REDIS_URL)', (dialect) => {
  jest.setTimeout(120_000);
  const servers: ServerProcess[] = [];
  let url: string;
  let cleanup: () => Promise<void>;
  let queue: Queue;
  const prefix = uniqueName('aer1t_ret');
  const admin = adminKey();

  beforeAll(async () => {
    let env: Record<string, string> = {};
    if (dialect === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      cleanup = db.drop;
      env = { LEDGER_SIGNING_KEY_FILE: testSigningKeyFile(), LEDGER_CHECKPOINT_STATE_FILE: testStateFile(url) };
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'aer1-retention-'));
      url = `sqlite:${join(dir, 'ledger.sqlite')}`;
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
    env = { ...env, DATABASE_URL: url, REDIS_URL, QUEUE_PREFIX: prefix, LEDGER_ADMIN_KEY: admin, PUBLIC_BASE_URL: 'https://ledger.test', RETENTION_PERIOD: 'PT3S', RETENTION_CHECK_INTERVAL_MS: '500', LOG_LEVEL: 'info' };
    servers.push(await ServerProcess.start(env)); // migrates first
    servers.push(await ServerProcess.start(env));
    queue = new Queue(RETENTION_QUEUE, { connection: redisOptionsFromUrl(REDIS_URL), prefix });
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await killAll();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    await cleanup?.();
  });

  const post = (s: ServerProcess, path: string, body: unknown, key: string) =>
    fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('one job scheduler, one worker per process; every payload past the period erased exactly once', async () => {
    const created = await post(servers[0], '/api/keys', { name: 'agent', role: 'producer' }, admin);
    expect(created.status).toBe(201);
    const key = ((await created.json()) as { key: string }).key;
    const tl = buildTimeline('job-replicas', Array.from({ length: 8 }, (_, i) => ({ tool: `lookup_${i}` })));
    // Half written through each process.
    for (const [i, e] of tl.entries()) expect((await post(servers[i % 2], '/api/receipts', receiptFor(e), key)).status).toBe(201);

    await waitUntil('a worker in each process and one scheduler', 10_000, async () => (await queue.getWorkers()).length === 2);
    expect(await queue.getJobSchedulersCount()).toBe(1);

    const db = await openDirect(url);
    try {
      const streams = tl.map((e) => `receipt:${e.id.toLowerCase()}`);
      const rows = async () => db.query<{ position: number | string; data: string }>(`SELECT position, data FROM events WHERE stream_id IN (${streams.map(() => '?').join(',')}) ORDER BY position`, streams);
      expect((await rows()).length).toBe(8);
      await waitUntil('every receipt erased', 30_000, async () => (await rows()).every((r) => r.data === ''), 200);
      await new Promise((r) => setTimeout(r, 2000)); // four more runs: none erases anything again
      const positions = (await rows()).map((r) => Number(r.position));
      const erasures = await db.query<{ data: string; key_id: string }>("SELECT data, key_id FROM events WHERE type = 'PayloadsErased' ORDER BY position");
      const naming = new Map<number, number>();
      for (const e of erasures) {
        const d = JSON.parse(e.data) as { positions: number[]; origin: string; reason: string; legal_basis: string };
        expect([e.key_id, d.origin, d.reason, d.legal_basis]).toEqual(['system', 'retention', 'retention', 'retention policy RETENTION_PERIOD=PT3S']);
        for (const p of d.positions) naming.set(p, (naming.get(p) ?? 0) + 1);
      }
      expect(positions.map((p) => naming.get(p))).toEqual(positions.map(() => 1));
      expect([...naming.values()].every((n) => n === 1)).toBe(true);
      // The read model agrees: one erased_events row per position.
      const counted = await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM erased_events WHERE position IN (${positions.join(',')})`);
      expect(Number(counted[0].n)).toBe(8);
      // Runs happened as BullMQ jobs (taken by one worker each).
      expect((await queue.getJobCounts('completed')).completed).toBeGreaterThan(1);
    } finally {
      await db.close();
    }
    for (const s of servers) expect(s.exited).toBe(false);
  });
});

describe('npm run ledger -- create-key --retention', () => {
  it('records the key\'s own period; a period that is not an ISO 8601 duration is refused (exit 2), nothing created', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aer1-retention-cli-'));
    try {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_URL: `sqlite:${join(dir, 'l.sqlite')}`, LOG_LEVEL: 'warn' };
      const cli = (...args: string[]) => spawnSync(process.execPath, [join(__dirname, '../../dist/src/ledger-cli.js'), ...args], { env, encoding: 'utf8', timeout: 60_000 });
      const ok = cli('create-key', '--role', 'producer', '--name', 'support-bot', '--retention', 'P30D');
      expect(ok.status).toBe(0);
      expect(JSON.parse(ok.stdout.trim().split('\n').pop()!)).toMatchObject({ name: 'support-bot', retention_period: 'P30D' });
      const bad = cli('create-key', '--role', 'producer', '--name', 'other', '--retention', '30d');
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain('retention_period: a retention period is an ISO 8601 duration');
      const listed = cli('list-keys');
      expect(listed.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { name: string; retention_period: string | null }).retention_period)).toEqual(['P30D']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
