/**
 * Test helpers for the witness: an in-memory log (Ed25519 key, RFC 6962
 * tree, signed checkpoints, consistency proofs) and `aer1 witness serve` as
 * a real child process (the compiled bin/aer1: run `npm run build` first).
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkpointNoteText,
  consistencyProofSync,
  EMPTY_ROOT,
  formatAddCheckpointRequest,
  generateSignerKey,
  NodeId,
  NoteSigner,
  signNote,
  TreeIntegrator,
} from '../../src/core/tlog';

export const ROOT = join(__dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'aer1');
const CLI_JS = join(ROOT, 'dist', 'src', 'cli', 'commands', 'witness.js');

/** Fail (never skip) when the compiled CLI is missing or older than this feature. */
export function requireBuild(): void {
  if (!existsSync(CLI_JS)) throw new Error(`${CLI_JS} is missing: run \`npm run build\` before this test (npm test's pretest does)`);
}

/** A log kept in memory: leaves, stored nodes, a root per size. */
export class TestLog {
  readonly signer: NoteSigner;
  readonly vkey: string;
  private readonly nodes = new Map<string, Buffer>();
  private readonly roots: Buffer[] = [EMPTY_ROOT];
  private readonly tree = TreeIntegrator.empty();

  /** `key` shares a signer between logs (a rewritten history signed by the same log key). */
  constructor(
    readonly origin: string,
    private readonly leafPrefix = 'leaf',
    key?: { signer: NoteSigner; verifierKey: string },
  ) {
    const k = key ?? generateSignerKey(origin);
    this.signer = k.signer;
    this.vkey = k.verifierKey;
  }

  get size(): number {
    return this.tree.size;
  }

  /** Append `n` leaves (`<prefix>-<index>`); returns the new size. */
  grow(n: number, prefix = this.leafPrefix): number {
    for (let i = 0; i < n; i++) {
      const r = this.tree.appendLeaves([Buffer.from(`${prefix}-${this.tree.size}`)]);
      for (const node of r.nodes.toArray()) this.nodes.set(`${node.level}/${node.index}`, Buffer.from(node.hash));
      this.roots[r.size] = r.root;
    }
    return this.tree.size;
  }

  root(size = this.size): Buffer {
    return this.roots[size];
  }

  /** The checkpoint note at `size` signed by `signers` (default: the log key). */
  checkpoint(size = this.size, signers: NoteSigner[] = [this.signer], root = this.root(size)): string {
    return signNote(checkpointNoteText({ origin: this.origin, size, rootHash: root, extensions: [] }), signers);
  }

  /** The RFC 6962 consistency proof from `m` to `n` (empty for m = 0 or m = n). */
  proof(m: number, n = this.size): Buffer[] {
    if (m === 0 || m === n) return [];
    return consistencyProofSync(m, n, { readHashes: (ids: readonly NodeId[]) => ids.map((id) => this.nodes.get(`${id.level}/${id.index}`) as Buffer) });
  }

  /** An add-checkpoint body from `old` to `size`. */
  request(old: number, size = this.size): string {
    return formatAddCheckpointRequest({ oldSize: old, proof: this.proof(old, size), checkpoint: this.checkpoint(size) });
  }
}

/** A temporary directory removed by `cleanup`. */
export function tempDir(prefix = 'aer1-witness-'): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** `node bin/aer1 ...` to completion. */
export function aer1(args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A running `aer1 witness serve` process. */
export interface WitnessProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Start `aer1 witness serve` listening on `listen` (default 127.0.0.1 on a
 * free port, port 0; the URL is read from its "listening on" line). Rejects with its stderr if
 * it exits first.
 */
export function startWitnessProcess(opts: { key: string; logs: string[]; state: string; listen?: string }): Promise<WitnessProcess> {
  const args = [BIN, 'witness', 'serve', '--key', opts.key, '--state', opts.state, '--listen', opts.listen ?? '127.0.0.1:0', ...opts.logs.flatMap((l) => ['--log', l])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the witness did not start within 15 s: ${err}`)), 15_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      err += d;
      const m = / listening on (http:\/\/\S+)\n/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], stderr: () => err, exited });
      }
    });
    void exited.then((r) => {
      clearTimeout(timer);
      reject(new Error(`the witness exited (${r.code ?? r.signal}) before listening: ${err}`));
    });
  });
}

/** Stop a witness process with `signal` and wait for it. */
export async function stop(w: WitnessProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined> {
  if (!w) return undefined;
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill(signal);
  return w.exited;
}

/** POST a body to `<url>/add-checkpoint`. */
export async function addCheckpoint(url: string, body: string | Buffer): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}
