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

/** A named group of frames: a sample belongs to the first group matched walking from its leaf frame to the root. */
export interface FrameGroup {
  name: string;
  /** Matches a frame by its function name and url (path relative to the repository, or node:... / empty). */
  test(functionName: string, url: string): boolean;
  /** Only when no other group matches any frame of the sample (e.g. Node's sockets, which the database driver uses too). */
  fallback?: boolean;
}

function load(file: string): { p: Profile; byId: Map<number, ProfileNode>; parentOf: Map<number, number> } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const parentOf = new Map<number, number>();
  for (const x of p.nodes) for (const c of x.children ?? []) parentOf.set(c, x.id);
  return { p, byId, parentOf };
}

function urlOf(f: CallFrame): string {
  return f.url.startsWith('file://') ? relative(process.cwd(), f.url.slice(7)) : f.url;
}

/**
 * Inclusive time per function (name + file:line): the samples with the
 * function anywhere on their stack (counted once per sample, recursion
 * included), largest first; `share` is of all sampled time.
 */
export function inclusiveFrames(file: string, n = 25): { totalMs: number; frames: Frame[] } {
  const { p, byId, parentOf } = load(file);
  const agg = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const us = p.timeDeltas[i] ?? 0;
    total += us;
    const seen = new Set<string>();
    for (let cur: number | undefined = p.samples[i]; cur !== undefined; cur = parentOf.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      const url = urlOf(f);
      const name = `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
      if (seen.has(name)) continue;
      seen.add(name);
      agg.set(name, (agg.get(name) ?? 0) + us);
    }
  }
  const frames = [...agg.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => ({ name, selfMs: us / 1000, share: us / total }));
  return { totalMs: total / 1000, frames };
}

/**
 * Sampled time per group: each sample goes to the first of `groups` that
 * matches a frame on its stack, walking from the leaf to the root (so a
 * hash computed by the ledger counts for the ledger, JSON.parse called by
 * the body parser for validation); a `fallback` group is tried only when no
 * other group matches the sample; samples no group matches go to `other`.
 */
export function groupedTime(file: string, groups: FrameGroup[]): { totalMs: number; groups: { name: string; ms: number; share: number }[] } {
  const { p, byId, parentOf } = load(file);
  const agg = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const us = p.timeDeltas[i] ?? 0;
    total += us;
    let name = 'other';
    for (const fallback of [false, true]) {
      search: for (let cur: number | undefined = p.samples[i]; cur !== undefined; cur = parentOf.get(cur)) {
        const f = byId.get(cur)!.callFrame;
        const url = urlOf(f);
        for (const g of groups) {
          if ((g.fallback === true) === fallback && g.test(f.functionName, url)) {
            name = g.name;
            break search;
          }
        }
      }
      if (name !== 'other') break;
    }
    agg.set(name, (agg.get(name) ?? 0) + us);
  }
  return { totalMs: total / 1000, groups: [...agg.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, share: us / total })) };
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
