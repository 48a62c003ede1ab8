/**
 * The application as `npm start` runs it (`node dist/src/main.js`), in a
 * child process on 127.0.0.1, on a benchmark database; API keys created with
 * the operator CLI (`node dist/src/ledger-cli.js create-key`, what
 * `npm run ledger -- create-key` runs).
 */
import { ChildProcess, execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BenchDb } from './db';
import { freePort, startChild, stopChild, waitForHttp, waitForReady } from './proc';

const execFileP = promisify(execFile);

export interface RunningApp {
  base: string;
  child: ChildProcess & { output(): string };
  stop(): Promise<void>;
}

/** Environment shared by the API and the workers: quiet logs (warn), the bench database. */
export function appEnv(db: BenchDb, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...extra };
  delete env.AER1_BENCH_CHILD;
  delete env.NODE_OPTIONS;
  return env;
}

/** Create an API key (migrating the database on the way, as the CLI does). */
export async function createKey(root: string, db: BenchDb, role: string): Promise<string> {
  const { stdout } = await execFileP(process.execPath, [join(root, 'dist', 'src', 'ledger-cli.js'), 'create-key', '--role', role, '--name', `bench-${role}`], {
    cwd: root,
    env: appEnv(db),
  });
  const key = (JSON.parse(stdout.trim().split('\n').pop()!) as { key: string }).key;
  if (!key) throw new Error(`create-key printed no key: ${stdout}`);
  return key;
}

export async function startApp(root: string, db: BenchDb, extra: Record<string, string> = {}): Promise<RunningApp> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = startChild(process.execPath, [join(root, 'dist', 'src', 'main.js')], {
    cwd: root,
    env: appEnv(db, { PORT: String(port), PUBLIC_BASE_URL: base, ...extra }),
  });
  try {
    await waitForHttp(`${base}/health`, child);
  } catch (e) {
    await stopChild(child);
    throw e;
  }
  return { base, child, stop: () => stopChild(child) };
}

/** A verification worker (`node dist/src/worker.js`), ready when it says so over IPC. */
export async function startWorker(root: string, db: BenchDb, extra: Record<string, string>): Promise<ChildProcess & { output(): string }> {
  const child = startChild(process.execPath, [join(root, 'dist', 'src', 'worker.js')], { cwd: root, env: appEnv(db, extra), ipc: true });
  try {
    await waitForReady(child);
  } catch (e) {
    await stopChild(child);
    throw e;
  }
  return child;
}
