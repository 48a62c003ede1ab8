/**
 * Summarize a V8 CPU profile (`node --cpu-prof`): the top frames by self
 * time, with their share of the sampled time.
 *
 *   node bench/out/build/bench/profile-top.js FILE.cpuprofile [N] [--filter substring]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Frame {
  name: string;
  selfMs: number;
  share: number;
}

/** Self time per function (name + file:line), largest first. */
export function topFrames(file: string, n = 15, filter?: string): { totalMs: number; frames: Frame[] } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  // Restrict to samples under a frame whose name or url contains `filter` (e.g. the timed function).
  let allowed: Set<number> | null = null;
  if (filter) {
    allowed = new Set();
    const parentOf = new Map<number, number>();
    for (const x of p.nodes) for (const c of x.children ?? []) parentOf.set(c, x.id);
    for (const x of p.nodes) {
      for (let cur: number | undefined = x.id; cur !== undefined; cur = parentOf.get(cur)) {
        const f = byId.get(cur)!.callFrame;
        if (f.functionName.includes(filter) || f.url.includes(filter)) {
          allowed.add(x.id);
          break;
        }
      }
    }
  }
  const agg = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    if (allowed && !allowed.has(id)) continue;
    const f = byId.get(id)!.callFrame;
    const url = f.url.startsWith('file://') ? relative(process.cwd(), f.url.slice(7)) : f.url;
    const name = `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
    agg.set(name, (agg.get(name) ?? 0) + us);
    total += us;
  }
  const frames = [...agg.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => ({ name, selfMs: us / 1000, share: us / total }));
  return { totalMs: total / 1000, frames };
}

if (require.main === module) {
  process.stdout.on('error', () => undefined); // e.g. piped into head
  const args = process.argv.slice(2);
  const fi = args.indexOf('--filter');
  const filter = fi >= 0 ? args.splice(fi, 2)[1] : undefined;
  const [file, n] = args;
  if (!file) {
    process.stderr.write('usage: profile-top FILE.cpuprofile [N] [--filter substring]\n');
    process.exit(2);
  }
  const r = topFrames(file, Number(n ?? 15), filter);
  process.stdout.write(`${r.totalMs.toFixed(0)} ms sampled${filter ? ` under "${filter}"` : ''}\n`);
  for (const f of r.frames) process.stdout.write(`${(f.share * 100).toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(7)} ms  ${f.name}\n`);
}
