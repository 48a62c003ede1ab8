/** Timing helpers. */

/** Seconds since an arbitrary origin, high resolution. */
export function now(): number {
  return Number(process.hrtime.bigint()) / 1e9;
}

/** Run `fn` once and return its duration in seconds and its result. */
export async function time<T>(fn: () => T | Promise<T>): Promise<{ seconds: number; value: T }> {
  const t0 = now();
  const value = await fn();
  return { seconds: now() - t0, value };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Force a full GC between timed runs when node runs with --expose-gc (run.ts re-executes itself so). */
export function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) g();
}

export function best(xs: number[]): number {
  return Math.min(...xs);
}

/**
 * Time `a` and `b` alternately `reps` times (a, b, a, b, ...) so that both
 * see the same machine state, and return the best (lowest) seconds of each:
 * on a shared machine the least disturbed run is the closest to the cost.
 */
export async function sideBySide(reps: number, a: () => unknown, b: () => unknown): Promise<{ a: number; b: number; aAll: number[]; bAll: number[] }> {
  const aAll: number[] = [];
  const bAll: number[] = [];
  for (let i = 0; i < reps; i++) {
    gc();
    aAll.push((await time(a)).seconds);
    gc();
    bAll.push((await time(b)).seconds);
  }
  return { a: best(aAll), b: best(bAll), aAll, bAll };
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function pct(r: number): string {
  return `${(r * 100).toFixed(1)}%`;
}

/** "missed by N points", with enough digits that a near miss never reads as 0.0. */
export function shortfall(target: number, ratio: number): string {
  const d = (target - ratio) * 100;
  return `${d.toFixed(d < 0.1 ? 3 : 1)} percentage points`;
}

export function spread(xs: number[]): string {
  return xs.map((x) => x.toFixed(3)).join(' / ') + ' s';
}
