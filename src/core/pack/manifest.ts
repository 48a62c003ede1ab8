/**
 * The manifest phase: every member's SHA-256 against its manifest chunk,
 * every chunk against the final manifest, nothing after the end. A member a
 * chunk lists that the pack lacks is `member_missing`, said once, and the
 * comparison resynchronises after it (docs/evidence-pack.md).
 */
import { MANIFEST_CHUNK, memberHash, memberName, PACK_FORMAT } from './format';
import { Tally } from './result';

type Obj = Record<string, unknown>;

/** What the manifest phase has read so far. */
export class ManifestState {
  /** Members a manifest chunk lists that the pack lacks (`member_missing`): each the one failure of its absence. */
  readonly missing = new Set<string>();
  /** Members read since the last chunk: name, SHA-256 of the line. */
  pending: [string, string][] = [];
  readonly chunkHashes: [string, string][] = [];
  trailer: Obj | null = null;
}

/** A member line (not a chunk, not the trailer) read: it waits for the chunk that lists it. */
export function memberRead(s: ManifestState, name: string, line: Buffer): void {
  s.pending.push([name, memberHash(line)]);
}

/** A `manifest/<k>` chunk read: the members read since the previous chunk are compared with it. */
export function chunkRead(s: ManifestState, name: string, m: Obj, line: Buffer, t: Tally): void {
  const expectName = memberName.chunk(s.chunkHashes.length);
  if (name !== expectName) t.fail(name, 'manifest', `expected chunk ${expectName} here`);
  s.chunkHashes.push([name, memberHash(line)]);
  const listed = Array.isArray(m.members) ? (m.members as unknown[]) : [];
  const gaps = compareChunk(name, listed, s.pending, t, s.missing);
  if (!gaps && listed.length !== MANIFEST_CHUNK && listed.length !== s.pending.length) t.fail(name, 'manifest', `lists ${listed.length} members`);
  s.pending = [];
}

/** The end of the pack: the final manifest against the chunks read and the members counted (`members` held). */
export function finishManifest(s: ManifestState, members: number, t: Tally): void {
  const trailer = s.trailer;
  if (!trailer) {
    t.fail('manifest', 'manifest', 'the pack has no final manifest: it was cut short (or its last line altered)');
    return;
  }
  if (s.pending.length) for (const p of s.pending) t.fail(p[0], 'manifest', 'no manifest chunk lists this member');
  if (trailer.format !== PACK_FORMAT) t.fail('manifest', 'format', `format is ${JSON.stringify(trailer.format)}`);
  // A member missing (named above) is listed in the count: the count is checked against what the chunks list.
  const missing = s.missing.size;
  if (trailer.member_count !== members + missing) t.fail('manifest', 'manifest', `member_count is ${String(trailer.member_count)}, the pack holds ${members}${missing ? ` and ${missing} listed member${missing === 1 ? ' is' : 's are'} missing` : ''}`);
  const listed = Array.isArray(trailer.chunks) ? (trailer.chunks as unknown[]) : [];
  const n = Math.max(listed.length, s.chunkHashes.length);
  for (let k = 0; k < n; k++) {
    const l = listed[k];
    const got = s.chunkHashes[k];
    const lh = Array.isArray(l) ? l[1] : undefined;
    if (!got) t.fail(Array.isArray(l) ? String(l[0]) : 'manifest', 'manifest', 'the final manifest lists a chunk that is not in the pack');
    else if (!Array.isArray(l) || l[0] !== got[0] || lh !== got[1]) t.fail(got[0], 'manifest', `SHA-256 of the chunk is ${got[1]}, the final manifest says ${String(lh)}: the chunk or the manifest was altered`);
    else t.pass('manifest');
  }
}

/**
 * One manifest chunk (`name`, listing `listed`) against the members read
 * since the previous chunk (`got`: name, SHA-256), resynchronised after a gap:
 * a listed member the pack lacks is named once (`member_missing`, added to
 * `missing`), a member no entry lists is named as added, and the members
 * after either are compared with their own entries (never blamed for their
 * neighbour's absence). Returns true when a member was missing or added.
 */
export function compareChunk(name: string, listed: unknown[], got: [string, string][], t: Tally, missing: Set<string>): boolean {
  const entry = (l: unknown): [string | null, string | null] => [Array.isArray(l) && typeof l[0] === 'string' ? l[0] : null, Array.isArray(l) && typeof l[1] === 'string' ? l[1] : null];
  const listedNames = listed.map((l) => entry(l)[0]);
  const gotNames = new Set(got.map((g) => g[0]));
  const listedSet = new Set(listedNames.filter((x): x is string => x !== null));
  let gaps = false;
  let i = 0;
  let j = 0;
  while (i < listed.length || j < got.length) {
    const [ln, lh] = i < listed.length ? entry(listed[i]) : [null, null];
    const g = j < got.length ? got[j] : null;
    if (g && ln === g[0]) {
      if (lh !== g[1]) t.fail(g[0], 'manifest', `SHA-256 of the member is ${g[1]}, ${name} says ${lh ?? '(none)'}: the member or the manifest was altered`);
      else t.pass('manifest');
      i++;
      j++;
    } else if (i < listed.length && (ln === null || !gotNames.has(ln))) {
      gaps = true;
      if (ln === null) t.fail(name, 'manifest', `entry ${i} is malformed (not [member, sha256])`);
      else if (!missing.has(ln)) {
        missing.add(ln);
        t.fail(ln, 'member_missing', `listed in the manifest (${name}) but missing from the pack: removed`);
      }
      i++;
    } else if (g && !listedSet.has(g[0])) {
      gaps = true;
      t.fail(g[0], 'manifest', `${name} does not list this member: it was added`);
      j++;
    } else {
      // Both are listed and held, in another order.
      if (g) t.fail(g[0], 'manifest', `${name} lists ${ln ?? '(malformed)'} at this place, not ${g[0]}: a member was moved`);
      i++;
      j++;
    }
  }
  return gaps;
}
