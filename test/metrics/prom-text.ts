/**
 * Read samples out of a Prometheus text exposition (the tests' own small
 * parser: `name{a="x",b="y"} value` lines, comments skipped).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    const v = m[3];
    out.push({ name: m[1], labels, value: v === 'NaN' ? NaN : v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v) });
  }
  return out;
}

/** The value of the one sample `name` whose labels include `labels` (0 when there is none, as a counter not yet incremented). */
export function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return hits[0]?.value ?? 0;
}

/** Whether a sample `name` with these labels exists at all. */
export function has(samples: Sample[], name: string, labels: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
