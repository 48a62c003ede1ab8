/**
 * CPU profile of the API server under load (issue 34): the application as
 * `npm start` runs it (child process, `dist/src/main.js`), single POSTs from
 * autocannon with 50 connections in this process, the server's profiler
 * running only while the measured requests are answered (see
 * lib/cpu-profile-preload.ts). The profile then holds the server's own
 * frames, no client's.
 */
import autocannon from 'autocannon';
import { join } from 'node:path';
import { appEnv, createKey } from './lib/app';
import { createDb, Dialect } from './lib/db';
import { freePort, startChild, stopChild, waitForHttp } from './lib/proc';
import { receiptBodies } from './lib/receipts';
import type { FrameGroup } from './profile-top';

const CONNECTIONS = 50;

/** Profile `n` single POSTs on `dialect`; writes `file` (a .cpuprofile) and returns the rate and latency seen. */
export async function profileSingleUnderLoad(root: string, tmp: string, dialect: Dialect, n: number, file: string, pgAdminUrl: string): Promise<{ rate: number; p50: number; p99: number }> {
  const db = await createDb(dialect, tmp, pgAdminUrl);
  try {
    const key = await createKey(root, db, 'producer');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = appEnv(db, { PORT: String(port), PUBLIC_BASE_URL: base, AER1_CPU_PROFILE: file });
    const preload = join(root, 'bench', 'out', 'build', 'bench', 'lib', 'cpu-profile-preload.js');
    const child = startChild(process.execPath, ['-r', preload, join(root, 'dist', 'src', 'main.js')], { cwd: root, env, ipc: true });
    const reply = (what: string): Promise<unknown> => new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no answer to ${what} from the server`)), 60_000);
      child.once('message', (m) => {
        clearTimeout(t);
        resolve(m);
      });
      child.send(what);
    });
    try {
      await waitForHttp(`${base}/health`, child);
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      for (const body of receiptBodies(root, 200)) {
        const r = await fetch(`${base}/api/receipts`, { method: 'POST', headers, body });
        if (r.status !== 201) throw new Error(`warm-up POST answered ${r.status}`);
        await r.arrayBuffer();
      }
      const bodies = receiptBodies(root, n);
      let next = 0;
      let created = 0;
      await reply('profile-start');
      const t0 = performance.now();
      const res = await new Promise<autocannon.Result>((resolve, reject) =>
        autocannon(
          {
            url: base,
            connections: CONNECTIONS,
            amount: n,
            timeout: 60,
            requests: [{ method: 'POST', path: '/api/receipts', headers, setupRequest: (req) => ({ ...req, body: bodies[next++ % n] }), onResponse: (s) => void (s === 201 && created++) }],
          },
          (err, r) => (err ? reject(err) : resolve(r)),
        ),
      );
      const seconds = (performance.now() - t0) / 1000;
      const written = await reply('profile-stop');
      if (written !== 'profile-written') throw new Error(`the server answered ${String(written)}`);
      if (created !== n) throw new Error(`${created} of ${n} answered 201`);
      return { rate: n / seconds, p50: res.latency.p50, p99: res.latency.p99 };
    } finally {
      await stopChild(child);
    }
  } finally {
    await db.drop();
  }
}

/** The groups of the single-POST breakdown (bench/PROFILE.md, "Single POST (issue 34)"), first match from the leaf up. */
export const SINGLE_POST_GROUPS: FrameGroup[] = [
  { name: 'garbage collector', test: (f) => f === '(garbage collector)' },
  { name: 'idle (waiting: sockets, fsync, database)', test: (f) => f === '(idle)' },
  { name: 'verification (core S6)', test: (_f, u) => u.includes('/core/aer1/') },
  { name: 'validation (body read, strict UTF-8, JSON parse)', test: (_f, u) => /\/common\/(raw-json|json-body|raw-body)|\/core\/json\/|body-parser|raw-body/.test(u) },
  { name: 'guards + auth (key, role, rate limit)', test: (_f, u) => /\/auth\/|\/common\/rate-limit|@nestjs\/throttler|guards-consumer/.test(u) },
  {
    name: 'ledger append + DB + commit group',
    test: (_f, u) => /\/database\/|\/ledger\/|\/log\/|\/receipts\/receipts\.(repository|projection)|\/core\/(ledger|tlog)\/|typeorm|better-sqlite3|node_modules\/pg|pg-protocol/.test(u),
  },
  { name: 'receipts service + decider', test: (_f, u) => u.includes('/receipts/') },
  { name: 'response (serialize, headers, write)', test: (_f, u) => /fastify\/lib\/(reply|wrapThenable|error-handler)|fast-json-stringify|router-response-controller|\/common\/error\.filter|safe-stable-stringify/.test(u) },
  { name: 'HTTP hooks (security headers, request checks, metrics, log)', test: (_f, u) => /http-hardening|helmet|request-log|\/metrics\/|pino/.test(u) },
  { name: 'HTTP stack (Node http, Fastify, Nest router, interceptors, rxjs)', test: (_f, u) => /node_modules\/(fastify|@fastify|find-my-way|avvio|@nestjs|rxjs|light-my-request)|^node:_http|^node:http/.test(u) },
  { name: 'HTTP stack (Node http, Fastify, Nest router, interceptors, rxjs)', fallback: true, test: (_f, u) => /^node:(net|internal\/(stream|streams|net|http))/.test(u) },
  { name: 'program (native, microtasks)', test: (f) => f === '(program)' || f === 'runMicrotasks' || f === 'processTicksAndRejections' },
];
