/**
 * The completeness phase (src/core/pack/streams.ts, issue 30) against a
 * deliberately simple reference over random histories: a signed statement
 * of the true heads, a pack holding a random subset of the events, and the
 * reference answer "a stream is incomplete when the positions the pack holds
 * of it are not every position of it up to its head". The phase must name
 * exactly those streams `stream_incomplete`, nothing else failing; a stale
 * head (an older event) must be a `stream_heads` failure naming the later
 * event the pack holds.
 */
import fc from 'fast-check';
import { eventHash, eventHashInput, LEDGER_GENESIS_HASH, StoredEvent } from '../../src/core/ledger/event-hash';
import { parseLeaf } from '../../src/core/ledger/leaf';
import { PackRecords } from '../../src/core/pack/members';
import { PackLeafEvent, Tally } from '../../src/core/pack/result';
import { checkStreams, linkOf, PackLinks } from '../../src/core/pack/streams';
import type { PackEvents } from '../../src/core/pack/events';
import { checkpointNoteText, generateSignerKey, parseCheckpoint, parseVerifierKey, signStreamHeads, StreamHead, TreeIntegrator } from '../../src/core/tlog';

const ORIGIN = 'ledger.test';
const log = generateSignerKey(ORIGIN);
const vkey = parseVerifierKey(log.verifierKey);
type Ev = StoredEvent;

/** A format 3 history: event i on stream `s<picks[i]>`, each linked to its stream's previous event. */
function history(picks: number[]): Ev[] {
  const out: Ev[] = [];
  const last = new Map<string, { pos: number; n: number }>();
  picks.forEach((k, i) => {
    const stream_id = `timeline:s${k}`;
    const prev = last.get(stream_id) ?? { pos: 0, n: 0 };
    const e = {
      position: i + 1,
      prev_hash: out.length ? out[out.length - 1].event_hash : LEDGER_GENESIS_HASH,
      recorded_at: '2026-12-01T00:00:00.000Z',
      stream_id,
      stream_position: prev.n + 1,
      type: 'TimelineEntryAppended',
      key_id: 'k1',
      key_name: 'p',
      format: 3,
      data: '',
      stream_prev: prev.pos,
      public_ids: '{}',
      payload_commitment: 'sha256:' + '0'.repeat(64),
    };
    out.push({ ...e, event_hash: eventHash(e) } as Ev);
    last.set(stream_id, { pos: i + 1, n: prev.n + 1 });
  });
  return out;
}

/** Run the phase over the events `held` of `events`, with a statement of `heads` as of all of them. */
function run(events: Ev[], held: Set<number>, heads: StreamHead[]) {
  const leaves = events.map((e) => Buffer.from(eventHashInput(e), 'utf8'));
  const root = TreeIntegrator.empty().appendLeaves(leaves).root;
  const cp = parseCheckpoint(checkpointNoteText({ origin: ORIGIN, size: events.length, rootHash: root, extensions: [] }));
  const note = signStreamHeads({ origin: ORIGIN, size: events.length, rootHash: root, heads }, log.signer);
  const links: PackLinks = new Map();
  const evs: PackEvents = new Map();
  events.forEach((e, i) => {
    if (!held.has(e.position)) return;
    const ev = parseLeaf(leaves[i]) as unknown as PackLeafEvent;
    links.set(e.position, linkOf(ev, leaves[i]));
    evs.set(e.position, ev);
  });
  const t = new Tally();
  const r = checkStreams({ statements: [{ member: 'log/stream-heads', note }], log: vkey, cp, links, events: evs, missing: new Set(), record: null, records: new PackRecords(), named: new Map() }, t);
  return { r, failures: t.failures };
}

/** The reference: each stream's true head, and whether the pack holds every one of its positions up to it. */
function reference(events: Ev[], held: Set<number>): { heads: StreamHead[]; incomplete: string[] } {
  const byStream = new Map<string, Ev[]>();
  for (const e of events) (byStream.get(e.stream_id) ?? byStream.set(e.stream_id, []).get(e.stream_id)!).push(e);
  const heads: StreamHead[] = [];
  const incomplete: string[] = [];
  for (const [s, list] of byStream) {
    const h = list[list.length - 1];
    heads.push({ streamId: s, position: h.position, eventHash: h.event_hash });
    if (!list.every((e) => held.has(e.position))) incomplete.push(s);
  }
  return { heads, incomplete: incomplete.sort() };
}

describe('completeness phase against the reference', () => {
  test('names exactly the streams the pack does not hold whole, and nothing else', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }), fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }), (picks, keep) => {
        const events = history(picks);
        const held = new Set(events.filter((_, i) => keep[i]).map((e) => e.position));
        const ref = reference(events, held);
        const { r, failures } = run(events, held, ref.heads);
        expect(failures.every((f) => f.check === 'stream_incomplete')).toBe(true);
        expect(failures.map((f) => f.member).sort()).toEqual(ref.incomplete);
        expect(r.completeness.proven).toBe(ref.incomplete.length === 0);
        // Each failure names a position of its stream the pack lacks.
        for (const f of failures) {
          const at = Number(/position (\d+)/.exec(f.detail)?.[1]);
          expect([events[at - 1].stream_id, held.has(at)]).toEqual([f.member, false]);
        }
      }),
      { numRuns: 80 },
    );
  });

  test('a stale head (an older event of the stream) is a false statement when the pack holds the later event', () => {
    const events = history([0, 1, 0, 0, 1]);
    const held = new Set(events.map((e) => e.position));
    const ref = reference(events, held);
    const stale = ref.heads.map((h) => (h.streamId === 'timeline:s0' ? { ...h, position: 3, eventHash: events[2].event_hash } : h));
    const { r, failures } = run(events, held, stale);
    expect(failures.map((f) => [f.member, f.check])).toEqual([['event/4', 'stream_heads']]);
    expect(failures[0].detail).toBe('event #3 of timeline:s0 is at position 4, after the stated head (3) as of size 5: the statement is false');
    expect(r.completeness.proven).toBe(false);
  });
});
