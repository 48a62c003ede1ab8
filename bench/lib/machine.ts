/** The machine's facts, printed with every figure. */
import Database from 'better-sqlite3';
import Redis from 'ioredis';
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import { Client } from 'pg';

export interface MachineFacts {
  cpu: string;
  cores: number;
  memory: string;
  os: string;
  node: string;
  v8: string;
  sqlite: string;
  postgres: string;
  redis: string;
  tmpfs: string;
  /** 1-minute load average at the start of the run (other work on the machine skews figures). */
  load: string;
  /** The commit measured, and whether src/ differed from it. */
  revision: string;
}

async function pgVersion(url: string): Promise<string> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    const r = await c.query<{ v: string; s: string; f: string }>("SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS s, current_setting('fsync') AS f");
    return `PostgreSQL ${r.rows[0].v} (synchronous_commit=${r.rows[0].s}, fsync=${r.rows[0].f})`;
  } catch (e) {
    return `unavailable (${e instanceof Error ? e.message : String(e)})`;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function redisVersion(url: string): Promise<string> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 3000, enableOfflineQueue: false });
  try {
    await r.connect();
    const info = await r.info('server');
    return `Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'}`;
  } catch (e) {
    return `unavailable (${e instanceof Error ? e.message : String(e)})`;
  } finally {
    r.disconnect();
  }
}

function tmpFilesystem(): string {
  try {
    return execFileSync('df', ['-T', os.tmpdir()], { encoding: 'utf8' }).trim().split('\n').pop()!.split(/\s+/)[1] ?? '?';
  } catch {
    return '?';
  }
}

function revision(root: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'migrations', 'bin'], { cwd: root, encoding: 'utf8' }).trim();
    return dirty ? `${head} with uncommitted changes in src/migrations/bin (${dirty.split('\n').length} files)` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export async function machineFacts(pgUrl: string, redisUrl: string, root: string): Promise<MachineFacts> {
  const cpus = os.cpus();
  const db = new Database(':memory:');
  const sqlite = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  db.close();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bsVersion = (require('better-sqlite3/package.json') as { version: string }).version;
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    sqlite: `SQLite ${sqlite} (better-sqlite3 ${bsVersion})`,
    postgres: await pgVersion(pgUrl),
    redis: await redisVersion(redisUrl),
    tmpfs: `${os.tmpdir()} on ${tmpFilesystem()}`,
    revision: revision(root),
    load: os.loadavg().map((x) => x.toFixed(2)).join(' / '),
  };
}
