/** Child processes: run to completion with wall time and peak RSS, start servers and wait for them. */
import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { now } from './measure';

export interface RunOutcome {
  code: number | null;
  seconds: number;
  /** Peak resident set size in bytes (VmHWM / ru_maxrss), null when it could not be read. */
  peakRss: number | null;
  rssSource: string;
  stdout: string;
  stderr: string;
  /** Bytes read from stdout (with `discardStdout`; else 0). */
  stdoutBytes: number;
}

const GNU_TIME = '/usr/bin/time';

function hasGnuTime(): boolean {
  if (!existsSync(GNU_TIME)) return false;
  try {
    return readFileSync(GNU_TIME).includes('GNU');
  } catch {
    return false;
  }
}

/** VmHWM of a live process in bytes, or null. */
export function vmHwm(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Run `cmd args` to completion. Peak RSS from GNU time's ru_maxrss when
 * /usr/bin/time is GNU time, else from polling /proc/<pid>/status VmHWM
 * every 5 ms (a high-water mark, so the last read is within 5 ms of the end).
 * `stdoutFile` sends stdout to a file instead of collecting it; `discardStdout`
 * reads it from the pipe and drops it (output through a pipe, as `| next`,
 * without keeping it); its byte count is then `stdoutBytes`.
 */
export function runMeasured(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; stdoutFile?: string; discardStdout?: boolean; tmp: string }): Promise<RunOutcome> {
  const useTime = hasGnuTime();
  const timeFile = join(opts.tmp, `time-${process.pid}-${Date.now()}.txt`);
  const argv = useTime ? ['-f', '%M', '-o', timeFile, cmd, ...args] : args;
  const exe = useTime ? GNU_TIME : cmd;
  const outFd = opts.stdoutFile ? openSync(opts.stdoutFile, 'w') : null;
  const t0 = now();
  const child = spawn(exe, argv, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', outFd ?? 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let stdoutBytes = 0;
  if (opts.discardStdout) child.stdout?.on('data', (b: Buffer) => (stdoutBytes += b.length));
  else child.stdout?.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  let polled: number | null = null;
  const timer = useTime
    ? null
    : setInterval(() => {
        const v = child.pid ? vmHwm(child.pid) : null;
        if (v !== null && (polled === null || v > polled)) polled = v;
      }, 5);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = now() - t0;
      if (timer) clearInterval(timer);
      if (outFd !== null) closeSync(outFd);
      let peakRss: number | null = polled;
      let rssSource = 'polled /proc/<pid>/status VmHWM every 5 ms';
      if (useTime) {
        try {
          const kb = Number(readFileSync(timeFile, 'utf8').trim().split('\n').pop());
          peakRss = Number.isFinite(kb) ? kb * 1024 : null;
          rssSource = 'GNU time ru_maxrss';
        } catch {
          peakRss = null;
        }
        rmSync(timeFile, { force: true });
      }
      resolve({ code, seconds, peakRss, rssSource, stdout, stderr, stdoutBytes });
    });
  });
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
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

/** Start a long-running child; its output is kept (last 64 KiB) for error messages. */
export function startChild(cmd: string, args: string[], opts: SpawnOptions & { ipc?: boolean }): ChildProcess & { output(): string } {
  const child = spawn(cmd, args, { ...opts, stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'] }) as ChildProcess & { output(): string };
  let out = '';
  const keep = (s: string): void => {
    out = (out + s).slice(-65536);
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);
  child.output = () => out;
  return child;
}

/** Stop a child we started: SIGTERM, then SIGKILL after `graceMs`. */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Poll `url` until it answers 2xx (or the child exits, or `timeoutMs` passes). */
export async function waitForHttp(url: string, child: ChildProcess & { output(): string }, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${failureText(child.output())}`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`server did not answer ${url} within ${timeoutMs} ms: ${failureText(child.output())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The most telling line of a child's output: its own "cannot start: ..." line when there is one, else the last lines. */
export function failureText(out: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
  const line = plain.split('\n').find((l) => /cannot start:/.test(l));
  return line ? line.trim() : plain.slice(-1500).trim();
}

/** Wait for the IPC 'ready' message of a worker (src/worker.ts sends it). */
export function waitForReady(child: ChildProcess & { output(): string }, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`worker not ready within ${timeoutMs} ms: ${failureText(child.output())}`)), timeoutMs);
    child.once('message', (m) => {
      clearTimeout(t);
      if (m === 'ready') resolve();
      else reject(new Error(`worker said ${JSON.stringify(m)}`));
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`worker exited with ${code}: ${failureText(child.output())}`));
    });
  });
}
