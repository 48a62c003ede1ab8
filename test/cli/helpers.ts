/**
 * In-process harness for the `aer1` CLI: run() with captured streams and
 * fixture files in a temporary directory.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { run } from '../../src/cli/main';
import { defaultCorpusPath } from '../../src/cli/paths';

/** A writable that keeps everything written to it; `slow` acknowledges each write on a later tick. */
export class Capture extends Writable {
  private readonly chunks: Buffer[] = [];
  private readonly slow: boolean;
  writes = 0;

  constructor(options: { highWaterMark?: number; slow?: boolean } = {}) {
    super({ highWaterMark: options.highWaterMark ?? 16 * 1024 });
    this.slow = options.slow ?? false;
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    this.writes++;
    if (this.slow) setImmediate(cb);
    else cb();
  }

  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export interface CliRun {
  code: number;
  out: string;
  err: string;
  /** stdout split into lines, without the final empty string. */
  lines: string[];
}

/** Run the CLI in-process. `stdin` is fed as one chunk when given. */
export async function cli(argv: string[], options: { stdin?: string | Buffer; stdout?: Capture } = {}): Promise<CliRun> {
  const stdout = options.stdout ?? new Capture();
  const stderr = new Capture();
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]);
  const code = await run(argv, { stdout, stderr, stdin });
  const out = stdout.text;
  const lines = out.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return { code, out, err: stderr.text, lines };
}

/** A temporary directory, removed by `cleanup()`. */
export class TmpDir {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'aer1-cli-'));

  /** Write `content` (a string, bytes, or a value written as JSON) and return the path. */
  write(name: string, content: string | Buffer | object): string {
    const p = path.join(this.dir, name);
    writeFileSync(p, typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content, null, 2));
    return p;
  }

  path(name: string): string {
    return path.join(this.dir, name);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface Vector {
  id: string;
  kind: 'receipt' | 'chain' | 'commitment' | 'workflow';
  description: string;
  input: unknown;
  expected: { verdict: string; reasons: string[] };
}

export interface Corpus {
  corpus: string;
  version: string;
  vectors: Vector[];
}

/** The project's copy of the shared corpus (test/vectors/aer1-public/aer1-vectors.json). */
export function loadCorpus(): Corpus {
  return JSON.parse(readFileSync(defaultCorpusPath(), 'utf8')) as Corpus;
}

/** One vector of the corpus by id. */
export function vector(id: string): Vector {
  const v = loadCorpus().vectors.find((x) => x.id === id);
  if (!v) throw new Error(`no vector ${id}`);
  return v;
}

/** True when `text` shows a JavaScript stack frame. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+[:(]/.test(text) || /^\s+at /m.test(text);
}
