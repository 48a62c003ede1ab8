/**
 * The per-record guard's cost on the job page (issue 14): a 20,000-entry
 * timeline appended entry by entry (20,000 events), then `GET /jobs/{id}`
 * and `GET /api/jobs/{id}/verify` timed with the guard and with it replaced
 * by a no-op (the page as it was before). Also an imported timeline of the
 * same size (one event). Usage, after `npm run build`:
 *   npx tsc -p bench/tsconfig.json && node bench/out/build/bench/guard-cost.js [sqlite|postgres] [entries]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { randomBytes } from 'node:crypto';
import { createApp } from '../src/app.factory';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { timelineEntries } from '../src/cli/generate';
import { ProjectionGuard } from '../src/ledger/projection-guard';

const PG_ADMIN = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function median(n: number, fn: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

async function main(): Promise<void> {
  const dialect = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
  const entries = Number(process.argv[3] ?? 20_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-guard-cost-'));
  let url = `sqlite:${join(dir, 'l.sqlite')}`;
  let drop: (() => Promise<void>) | null = null;
  if (dialect === 'postgres') {
    const name = `aer1_guard_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    url = PG_ADMIN.replace(/\/[^/]*$/, `/${name}`);
    drop = async () => {
      const c = new Client({ connectionString: PG_ADMIN });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const app = await createApp({ ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://ledger.test', VERIFY_RATE_LIMIT: '1000000', BODY_LIMIT_BYTES: String(64 * 1024 * 1024), DATABASE_URL: url });
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as { port: number }).port;
  const base = `http://127.0.0.1:${port}`;
  try {
    const key = (await app.get(ApiKeysService).create('bench', 'producer')).key;
    const all = [...timelineEntries({ entries, job: 'job-guard-append' })];
    all[all.length - 1].close = true;
    for (let i = 0; i < all.length; i += 1000) {
      const r = await fetch(`${base}/api/jobs/job-guard-append/entries`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(all.slice(i, i + 1000)) });
      if (r.status !== 201) throw new Error(`append ${i}: ${r.status} ${await r.text()}`);
    }
    const imported = [...timelineEntries({ entries, job: 'job-guard-import' })];
    imported[imported.length - 1].close = true;
    const imp = await fetch(`${base}/api/jobs/job-guard-import/timeline`, { method: 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(imported) });
    if (imp.status !== 201) throw new Error(`import: ${imp.status} ${await imp.text()}`);

    const guard = app.get(ProjectionGuard);
    const real = guard.check.bind(guard);
    const get = (path: string) => async (): Promise<void> => {
      const r = await fetch(`${base}${path}`, { headers: { accept: 'text/html' } });
      if (r.status !== 200 && r.status !== 422) throw new Error(`${path}: ${r.status}`); // 422: a verifier's answer for a timeline that does not verify (timed the same)
      await r.arrayBuffer();
    };
    const out: string[] = [`${dialect}, ${entries} entries`];
    for (const job of ['job-guard-append', 'job-guard-import']) {
      for (const path of [`/jobs/${job}`, `/api/jobs/${job}/verify`]) {
        await get(path)(); // warm
        guard.check = async () => [];
        const before = await median(7, get(path));
        guard.check = real;
        const after = await median(7, get(path));
        out.push(`${path}: without guard ${before.toFixed(0)} ms, with guard ${after.toFixed(0)} ms (+${(after - before).toFixed(0)} ms, ${((after / before - 1) * 100).toFixed(0)}%)`);
      }
    }
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await app.close();
    if (drop) await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
