/**
 * Shared harness of the reliability suite: the corpus, fresh valid receipts,
 * the compiled server as a real child process (for SIGKILL and log capture),
 * a small fetch-based client, and bounded waiting. Every loop here is bounded
 * in count and time; every child process is tracked and killed by
 * {@link killAll}.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseService, StorageInputError, Tx } from '../../src/database/database.service';

export interface CorpusVector {
  id: string;
  kind: string;
  input: unknown;
  expected: { verdict: string; reasons: string[] };
}

export const CORPUS = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: CorpusVector[] };

export function vector(id: string): unknown {
  const v = CORPUS.vectors.find((x) => x.id === id);
  if (!v) throw new Error(`no corpus vector ${id}`);
  return v.input;
}

const VALID_RECEIPT = vector('receipt-core-valid') as Record<string, unknown>;

/** The valid corpus receipt under a new random id: canonical bytes and output hash stay valid. */
export function freshReceipt(): { id: string; text: string } {
  const id = randomUUID();
  return { id, text: JSON.stringify({ ...VALID_RECEIPT, id }) };
}

/** The compiled server (CI runs `npm run build` before `npm test`). */
export const MAIN_JS = join(__dirname, '../../dist/src/main.js');
export const WORKER_JS = join(__dirname, '../../dist/src/worker.js');

/** Fail (never skip) when the build output is missing. */
export function requireBuild(file = MAIN_JS): void {
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` before this test (CI runs it before \`npm test\`)`);
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Poll `fn` until it is true; throws after `timeoutMs`. */
export async function waitUntil(what: string, timeoutMs: number, fn: () => Promise<boolean> | boolean, intervalMs = 100): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Every child process started by this suite, killed by {@link killAll}. */
const children = new Set<ChildProcess>();

export async function killAll(): Promise<void> {
  for (const c of [...children]) await stopChild(c, 'SIGKILL');
}

/** `p`, or a rejection after `ms` (the timer is cleared either way, so it never holds the process open). */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function exitOf(c: ChildProcess): Promise<void> {
  return c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => c.once('exit', () => resolve()));
}

async function stopChild(c: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (c.exitCode === null && c.signalCode === null) {
    const exited = exitOf(c);
    c.kill(signal);
    await withTimeout(exited, 10_000, `process ${c.pid} to exit`).catch(() => undefined);
  }
  children.delete(c);
}

/** Output of a child process kept in memory, capped so a runaway log cannot exhaust memory. */
class Output {
  private parts: string[] = [];
  private size = 0;
  constructor(private readonly cap = 32 * 1024 * 1024) {}
  push(b: Buffer): void {
    if (this.size >= this.cap) return;
    const s = b.toString('utf8');
    this.parts.push(s);
    this.size += s.length;
  }
  get text(): string {
    return this.parts.join('');
  }
}

/** The API server (`node dist/src/main.js`) as a child process. */
export class ServerProcess {
  readonly stdout = new Output();
  readonly stderr = new Output();
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Start with exactly `env` (plus PATH) and wait until /health answers 200 (at most `timeoutMs`). */
  static async start(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
    requireBuild();
    const port = env.PORT ? Number(env.PORT) : await freePort();
    const child = spawn(process.execPath, [MAIN_JS], {
      cwd: join(__dirname, '../..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const s = new ServerProcess(child, port);
    child.stdout?.on('data', (d: Buffer) => s.stdout.push(d));
    child.stderr?.on('data', (d: Buffer) => s.stderr.push(d));
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (s.exited) throw new Error(`server exited during start (${child.exitCode ?? child.signalCode}):\n${s.stderr.text}\n${s.stdout.text.slice(-4000)}`);
      try {
        const r = await fetch(`${s.url}/health`, { signal: AbortSignal.timeout(2000) });
        if (r.status === 200) return s;
      } catch {
        // not listening yet
      }
      if (Date.now() > end) {
        await stopChild(child, 'SIGKILL');
        throw new Error(`server did not answer /health within ${timeoutMs} ms:\n${s.stderr.text}\n${s.stdout.text.slice(-4000)}`);
      }
      await sleep(100);
    }
  }

  /** SIGKILL: no shutdown hook runs, in-flight transactions are cut. */
  async kill(): Promise<void> {
    await stopChild(this.child, 'SIGKILL');
  }

  /** SIGTERM, then SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (!this.exited) {
      const exited = exitOf(this.child);
      this.child.kill('SIGTERM');
      const ok = await withTimeout(exited, 10_000, 'server to stop').then(() => true, () => false);
      if (!ok) await stopChild(this.child, 'SIGKILL');
    }
    children.delete(this.child);
  }
}

/** A response read whole: status, headers, text and the JSON body when it parses. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One HTTP request with fetch (bounded by `timeoutMs`). `body` is sent as is (string or bytes). */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: string | Buffer | Uint8Array; contentType?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const r = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : new Uint8Array(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await r.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: r.status, headers: r.headers, text, body };
}

/** Run `fn` over `items` with at most `n` at once; results in input order. */
export async function pool<T, R>(items: readonly T[], n: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return out;
}

/** True when `text` shows a JavaScript stack frame, a source path, or SQL / driver internals. */
export function leaksInternals(text: string): string | null {
  const patterns: [string, RegExp][] = [
    ['stack frame', /\n\s+at .+[:(]/],
    ['stack frame', /^\s+at \S+ \(/m],
    ['source path', /\/(work|home|usr|tmp|opt|var)\/[^\s"]*\.(js|ts)/],
    ['node_modules', /node_modules/],
    ['SQL', /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b/],
    ['driver error', /QueryFailedError|SQLITE_|better-sqlite3|duplicate key value|violates .* constraint|relation ".*" does not exist/i],
  ];
  for (const [name, re] of patterns) if (re.test(text)) return name;
  return null;
}

/** A unique name for queue prefixes and the like. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** A bootstrap admin key for a child server. */
export function adminKey(): string {
  return `admin_${randomBytes(24).toString('hex')}`;
}

/** Direct access to a ledger database (a SQLite file or a PostgreSQL URL), outside the service. */
export interface DirectDb {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Open `url` (`sqlite:<file>` or `postgres://...`); SQL uses `?` placeholders. */
export async function openDirect(url: string): Promise<DirectDb> {
  if (url.startsWith('sqlite:')) {
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(url.slice('sqlite:'.length), { fileMustExist: true, timeout: 10_000 });
    return {
      query: async <T>(sql: string, params: unknown[] = []) => {
        const stmt = db.prepare(sql);
        return (stmt.reader ? stmt.all(...params) : (stmt.run(...params), [])) as T[];
      },
      close: async () => void db.close(),
    };
  }
  const { Client } = await import('pg');
  const c = new Client({ connectionString: url });
  await c.connect();
  return {
    query: async <T>(sql: string, params: unknown[] = []) => {
      let n = 0;
      return (await c.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as T[];
    },
    close: () => c.end(),
  };
}

/** COUNT(*) helper. */
export async function countOf(db: DirectDb, sql: string, params: unknown[] = []): Promise<number> {
  const rows = await db.query<{ n: number | string }>(sql, params);
  return Number(rows[0].n);
}

/** A well-formed -07 chain entry of `job` at `seq` after `prev` (`nonce` makes competing entries differ). */
export function makeEntry(job: string, seq: number, prev: string, options: { close?: boolean; nonce?: string } = {}): Record<string, unknown> {
  const bytes = Buffer.from(JSON.stringify({ step: seq, job, nonce: options.nonce ?? '' }), 'utf8').toString('base64');
  const e: Record<string, unknown> = { seq, job_id: job, id: randomUUID(), tool: 'fetch_page', provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: bytes, prev_digest: prev };
  if (options.close) e.close = true;
  return e;
}

/** Make an in-process Nest app listen on 127.0.0.1 (a real socket, so concurrent clients are real) and return its base URL. */
export async function listen(app: { listen(port: number, host: string): Promise<unknown>; getHttpServer(): { address(): unknown } }): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const a = app.getHttpServer().address() as { port: number };
  return `http://127.0.0.1:${a.port}`;
}

/**
 * Make every write of `db` whose result names one of `poisoned` fail at the
 * end of its own work with a storage refusal (400 `value_too_large`), as the
 * database refusing a row would: for tests of a bad write in a commit group.
 * Undone by `jest.restoreAllMocks()`.
 */
export function poisonWrites(db: DatabaseService, poisoned: ReadonlySet<string>): void {
  const write = db.write.bind(db);
  jest.spyOn(db, 'write').mockImplementation(((fn: (tx: Tx) => Promise<unknown>, options?: { alone?: boolean }) =>
    write(async (tx) => {
      const v = await fn(tx);
      const text = JSON.stringify(v) ?? '';
      for (const id of poisoned) if (text.includes(id)) throw new StorageInputError('value_too_large', 'an identifier or indexed field is too long to be stored; nothing was recorded');
      return v;
    }, options)) as DatabaseService['write']);
}
