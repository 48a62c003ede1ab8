/**
 * CPU profiles of the benchmark workloads (`node --cpu-prof`), with the top
 * frames by self time printed at the end:
 *
 *   node bench/out/build/bench/profile.js WORKLOAD [N]
 *
 * WORKLOAD: timeline | merkle | cli | coverage | ingest-batch-sqlite |
 * ingest-batch-postgres | ingest-single-sqlite | ingest-single-postgres |
 * otlp-sqlite | otlp-postgres (N requests of 512 execute_tool spans; also
 * prints the statements the server sent and the time it waited on them) |
 * single-load-sqlite | single-load-postgres (issue 34: N single POSTs from
 * autocannon, 50 connections, to the server started as `npm start` starts
 * it, profiled in that process only while it answers them; prints the top
 * frames by self and by inclusive time and the time per group, see
 * profile-load.ts).
 * The ingestion workloads run the application in process (createApp, as
 * test/helpers/app.ts does) so that the profile covers the server; the
 * client's frames (undici) are listed too and are not the server's cost.
 * Profiles are kept in bench/out/profiles/. LEDGER_EVENT_FORMAT=2 in the
 * environment runs the ingestion and OTLP workloads writing format 2 events.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { groupedTime, inclusiveFrames, topFrames } from './profile-top';
import { profileSingleUnderLoad, SINGLE_POST_GROUPS } from './profile-load';

const root = resolve(__dirname, '..', '..', '..', '..');
const dir = join(root, 'bench', 'out', 'profiles');

async function workload(name: string, n: number | undefined): Promise<void> {
  const tmp = join(root, 'bench', 'out', 'tmp');
  mkdirSync(tmp, { recursive: true });
  switch (name) {
    case 'timeline': {
      const { TimelineVerifier } = await import('../src/core/aer1');
      const { timelineEntries } = await import('../src/cli/generate');
      const entries = [...timelineEntries({ entries: n ?? 300_000, job: 'p' })];
      const t0 = Date.now();
      const v = new TimelineVerifier();
      for (const e of entries) v.push(e);
      process.stdout.write(`verified ${v.finish().entry_count} entries in ${Date.now() - t0} ms\n`);
      return;
    }
    case 'merkle': {
      const { merkleRoot } = await import('../src/core/aer1');
      const { stableUuid } = await import('../src/cli/generate');
      const ids = Array.from({ length: n ?? 1_000_000 }, (_, i) => stableUuid(`s/${i}`));
      const t0 = Date.now();
      merkleRoot(ids);
      process.stdout.write(`merkle root of ${ids.length} in ${Date.now() - t0} ms\n`);
      return;
    }
    case 'coverage': {
      const { benchCoverage } = await import('./coverage');
      const r = await benchCoverage({ quick: false, tmp, root, reps: 1, log: () => undefined, pgAdminUrl: '', redisUrl: '' });
      for (const x of r) process.stdout.write(`${x.figure}: ${x.value} s\n`);
      return;
    }
    case 'ingest-batch-sqlite':
    case 'ingest-batch-postgres':
    case 'ingest-single-sqlite':
    case 'ingest-single-postgres': {
      const [, mode, dialect] = name.split('-') as [string, 'batch' | 'single', 'sqlite' | 'postgres'];
      const { createApp } = await import('../src/app.factory');
      const { ApiKeysService } = await import('../src/auth/api-keys.service');
      const { createDb } = await import('./lib/db');
      const { receiptBodies } = await import('./lib/receipts');
      const db = await createDb(dialect, tmp, process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
      const app = await createApp({ DATABASE_URL: db.url, LOG_LEVEL: 'warn', NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://127.0.0.1', LEDGER_EVENT_FORMAT: process.env.LEDGER_EVENT_FORMAT });
      await app.init();
      await app.listen(0, '127.0.0.1');
      const port = (app.getHttpServer().address() as { port: number }).port;
      const key = (await app.get(ApiKeysService).create('profile', 'producer')).key;
      const count = n ?? (mode === 'batch' ? 20_000 : 3_000);
      const bodies = receiptBodies(root, count);
      const t0 = Date.now();
      const headers = { authorization: `Bearer ${key}`, 'content-type': mode === 'batch' ? 'application/x-ndjson' : 'application/json' };
      if (mode === 'batch') {
        for (let i = 0; i < count; i += 1000) {
          const r = await fetch(`http://127.0.0.1:${port}/api/receipts/batch`, { method: 'POST', headers, body: bodies.slice(i, i + 1000).join('\n') });
          if (r.status !== 200) throw new Error(`batch ${r.status}`);
          await r.arrayBuffer();
        }
      } else {
        let next = 0;
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            while (next < count) {
              const r = await fetch(`http://127.0.0.1:${port}/api/receipts`, { method: 'POST', headers, body: bodies[next++] });
              if (r.status !== 201) throw new Error(`single ${r.status}`);
              await r.arrayBuffer();
            }
          }),
        );
      }
      process.stdout.write(`${mode} ${dialect}: ${count} receipts in ${Date.now() - t0} ms\n`);
      await app.close();
      await db.drop();
      return;
    }
    case 'otlp-sqlite':
    case 'otlp-postgres': {
      const dialect = name.split('-')[1] as 'sqlite' | 'postgres';
      const { createApp } = await import('../src/app.factory');
      const { ApiKeysService } = await import('../src/auth/api-keys.service');
      const { StatementRunner } = await import('../src/database/statement-runner');
      const { createDb } = await import('./lib/db');
      const { requests } = await import('./otlp');
      // Statements the server sends (single queries and queued-row INSERT runs) and the time spent awaiting them.
      const counts = { queries: 0, runs: 0, ms: 0 };
      const proto = StatementRunner.prototype as unknown as Record<'run' | 'writeRuns', (...a: unknown[]) => Promise<unknown>>;
      for (const m of ['run', 'writeRuns'] as const) {
        const orig = proto[m];
        proto[m] = async function (this: unknown, ...a: unknown[]): Promise<unknown> {
          const t = process.hrtime.bigint();
          try {
            return await orig.apply(this, a);
          } finally {
            counts.ms += Number(process.hrtime.bigint() - t) / 1e6;
            if (m === 'run') counts.queries++;
            else counts.runs++;
          }
        };
      }
      const db = await createDb(dialect, tmp, process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
      const app = await createApp({ DATABASE_URL: db.url, LOG_LEVEL: 'warn', NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://127.0.0.1', LEDGER_EVENT_FORMAT: process.env.LEDGER_EVENT_FORMAT });
      await app.init();
      await app.listen(0, '127.0.0.1');
      const port = (app.getHttpServer().address() as { port: number }).port;
      const key = (await app.get(ApiKeysService).create('profile', 'producer')).key;
      const bodies = requests((n ?? 40) + 1);
      const post = async (body: Buffer): Promise<void> => {
        const r = await fetch(`http://127.0.0.1:${port}/v1/traces`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf' }, body });
        if (r.status !== 200) throw new Error(`otlp ${r.status}: ${await r.text()}`);
        await r.arrayBuffer();
      };
      await post(bodies[0]); // warm-up
      Object.assign(counts, { queries: 0, runs: 0, ms: 0 });
      const t0 = Date.now();
      for (const b of bodies.slice(1)) await post(b);
      const ms = Date.now() - t0;
      const spans = (bodies.length - 1) * 512;
      process.stdout.write(`otlp ${dialect}: ${spans} spans in ${ms} ms (${Math.round((spans / ms) * 1000)} spans/s); per request: ${(counts.queries / (bodies.length - 1)).toFixed(1)} queries, ${(counts.runs / (bodies.length - 1)).toFixed(1)} queued-row writes, ${(counts.ms / (bodies.length - 1)).toFixed(0)} ms awaiting statements\n`);
      await app.close();
      await db.drop();
      return;
    }
    default:
      throw new Error(`unknown workload ${name}`);
  }
}

function newest(): string | null {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
  return files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] ?? null;
}

async function main(): Promise<void> {
  const [name, nArg] = process.argv.slice(2);
  const n = nArg ? Number(nArg) : undefined;
  if (process.env.AER1_PROFILE_CHILD === '1') return workload(name, n);
  if (!name) {
    process.stderr.write('usage: profile WORKLOAD [N]\n');
    process.exit(2);
  }
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  if (name === 'single-load-sqlite' || name === 'single-load-postgres') {
    const file = join(dir, `${name}-${Date.now()}.cpuprofile`);
    const tmp = join(root, 'bench', 'out', 'tmp');
    mkdirSync(tmp, { recursive: true });
    const r = await profileSingleUnderLoad(root, tmp, name === 'single-load-sqlite' ? 'sqlite' : 'postgres', n ?? 10_000, file, process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
    const self = topFrames(file, 30);
    const incl = inclusiveFrames(file, 40);
    const groups = groupedTime(file, SINGLE_POST_GROUPS);
    const line = (x: { share: number; selfMs: number; name: string }): string => `${(x.share * 100).toFixed(1).padStart(5)}%  ${x.selfMs.toFixed(0).padStart(7)} ms  ${x.name}\n`;
    process.stdout.write(`\n${file}\n${Math.round(r.rate)} requests/s while profiled (p50 ${r.p50} ms, p99 ${r.p99} ms); ${self.totalMs.toFixed(0)} ms sampled\n`);
    process.stdout.write('\ntime per group (first match from the leaf up):\n');
    for (const g of groups.groups) process.stdout.write(`${(g.share * 100).toFixed(1).padStart(5)}%  ${g.ms.toFixed(0).padStart(7)} ms  ${g.name}\n`);
    process.stdout.write('\ntop frames by self time:\n');
    for (const x of self.frames) process.stdout.write(line(x));
    process.stdout.write('\ntop frames by inclusive time:\n');
    for (const x of incl.frames) process.stdout.write(line(x));
    return;
  }
  if (name === 'cli') {
    // The CLI itself under --cpu-prof, on a generated NDJSON timeline.
    const file = join(root, 'bench', 'out', 'tmp', 'profile-timeline.ndjson');
    mkdirSync(join(root, 'bench', 'out', 'tmp'), { recursive: true });
    const gen = spawnSync('sh', ['-c', `node bin/aer1 generate timeline --entries ${n ?? 1_000_000} > ${file}`], { cwd: root, stdio: 'inherit' });
    if (gen.status !== 0) throw new Error('generate failed');
    spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, join(root, 'bin', 'aer1'), 'verify', '--kind', 'chain', file], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    const r = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--max-old-space-size=8192', __filename, name, ...(nArg ? [nArg] : [])], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, AER1_PROFILE_CHILD: '1' },
    });
    if (r.status !== 0) throw new Error(`workload exited ${r.status}`);
  }
  const f = newest();
  if (!f || statSync(f).mtimeMs < started) throw new Error('no profile written');
  const t = topFrames(f, 25);
  process.stdout.write(`\n${f}\n${t.totalMs.toFixed(0)} ms sampled; top frames by self time:\n`);
  for (const x of t.frames) process.stdout.write(`${(x.share * 100).toFixed(1).padStart(5)}%  ${x.selfMs.toFixed(0).padStart(7)} ms  ${x.name}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`profile: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
