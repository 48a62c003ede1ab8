/**
 * Stream-heads statements (issue 30): the note format (src/core/tlog/stream-heads.ts),
 * hostile stream ids, signing and verifying with the log key, and the
 * streaming check over leaves (src/core/ledger/stream-heads-check.ts)
 * cross-checked with a deliberately simple reference ("the newest event of
 * each stream with position <= N") over random histories.
 */
import fc from 'fast-check';
import { eventHash, eventHashInput, LEDGER_GENESIS_HASH, StoredEvent } from '../../src/core/ledger/event-hash';
import { HeadsChecker, ServedLeaf } from '../../src/core/ledger/stream-heads-check';
import {
  checkpointNoteText,
  decodeStreamId,
  encodeStreamId,
  formatStreamHeads,
  generateSignerKey,
  parseCheckpoint,
  parseStreamHeads,
  parseVerifierKey,
  signStreamHeads,
  StreamHead,
  StreamHeads,
  TlogError,
  TreeIntegrator,
  verifyStreamHeads,
} from '../../src/core/tlog';

const ORIGIN = 'ledger.test';
const ROOT = Buffer.alloc(32, 7);
const H = (c: string): string => c.repeat(64);
const log = generateSignerKey(ORIGIN);
const other = generateSignerKey(ORIGIN);

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof TlogError) return e.code;
    throw e;
  }
  return 'no error';
}

const text = (lines: string[]): string => lines.map((l) => l + '\n').join('');

describe('stream-heads format', () => {
  const s: StreamHeads = {
    origin: ORIGIN,
    size: 20,
    rootHash: ROOT,
    heads: [
      { streamId: 'timeline:job 1', position: 12, eventHash: H('a') },
      { streamId: 'receipt:0b7c', position: 3, eventHash: H('b') },
      { streamId: 'plan:none', position: 0, eventHash: null },
    ],
  };

  test('writes origin, format, size, root, then sorted lines; parses back to the same heads', () => {
    const t = formatStreamHeads(s);
    expect(t).toBe(text([ORIGIN, 'aer1-stream-heads/1', '20', ROOT.toString('base64'), 'plan:none 0', `receipt:0b7c 3 ${H('b')}`, `timeline:job%201 12 ${H('a')}`]));
    const p = parseStreamHeads(t);
    expect(p.heads.map((h) => [h.streamId, h.position, h.eventHash])).toEqual([
      ['plan:none', 0, null],
      ['receipt:0b7c', 3, H('b')],
      ['timeline:job 1', 12, H('a')],
    ]);
    expect([p.origin, p.size, p.rootHash.equals(ROOT)]).toEqual([ORIGIN, 20, true]);
  });

  test('a statement is not a checkpoint and a checkpoint is not a statement', () => {
    expect(code(() => parseCheckpoint(formatStreamHeads(s)))).toBe('checkpoint_size_invalid');
    expect(code(() => parseStreamHeads(checkpointNoteText({ origin: ORIGIN, size: 20, rootHash: ROOT, extensions: [] })))).toBe('heads_not_a_statement');
  });

  test('hostile stream ids: each has one spelling, round-trips, and keeps the line to three fields', () => {
    const ids = ['timeline:a b', 'timeline:100%', 'timeline:é', 'timeline:\u202Eevil', 'timeline:tab\there', 'timeline:new\nline', 'timeline:— x', 'timeline:日本', 'x+y/z', 'timeline:\u0000', '%41'];
    for (const id of ids) {
      const e = encodeStreamId(id);
      expect(e).toMatch(/^[\x21-\x7e]+$/);
      expect(decodeStreamId(e)).toBe(id);
    }
    expect(encodeStreamId('timeline:a b')).toBe('timeline:a%20b');
    expect(encodeStreamId('timeline:100%')).toBe('timeline:100%25');
    expect(encodeStreamId('timeline:é')).toBe('timeline:%C3%A9');
    // NFC and NFD are two ids, written differently.
    expect(encodeStreamId('e\u0301')).toBe('e%CC%81');
    const all = formatStreamHeads({ origin: ORIGIN, size: 1, rootHash: ROOT, heads: ids.map((streamId) => ({ streamId, position: 0, eventHash: null })) });
    expect(parseStreamHeads(all).heads.map((h) => h.streamId).sort()).toEqual([...ids].sort());
  });

  test.each([
    ['timeline:%c3%a9', 'lowercase hex'],
    ['timeline:%41', 'an escape of a byte written as itself'],
    ['timeline:%C3', 'not UTF-8'],
    ['timeline:%ED%A0%80', 'a surrogate in UTF-8'],
    ['timeline:%G1', 'not hex'],
    ['timeline:%2', 'a cut escape'],
    ['timeline:é', 'a raw non-ASCII character'],
  ])('refuses the stream id %s (%s)', (id) => {
    expect(code(() => parseStreamHeads(text([ORIGIN, 'aer1-stream-heads/1', '1', ROOT.toString('base64'), `${id} 0`])))).toBe('heads_stream_id_invalid');
  });

  test('refuses ids that cannot be written: empty, lone surrogate, over 1024 bytes', () => {
    expect(code(() => encodeStreamId(''))).toBe('heads_stream_id_invalid');
    expect(code(() => encodeStreamId('a\ud800'))).toBe('heads_stream_id_invalid');
    expect(code(() => encodeStreamId('a'.repeat(1025)))).toBe('heads_stream_id_invalid');
    expect(encodeStreamId('a'.repeat(1024))).toHaveLength(1024);
  });

  const head = ['ledger.test', 'aer1-stream-heads/1', '10', ROOT.toString('base64')];
  test.each([
    [[...head], 'heads_malformed'],
    [[...head, ''], 'heads_line_malformed'],
    [[...head, 'a 0', 'a 0'], 'heads_duplicate_stream'],
    [[...head, 'b 0', 'a 0'], 'heads_not_sorted'],
    [[...head, 'a 11 ' + H('a')], 'heads_position_invalid'],
    [[...head, 'a 05 ' + H('a')], 'heads_position_invalid'],
    [[...head, 'a 0 ' + H('a')], 'heads_position_invalid'],
    [[...head, 'a 5'], 'heads_line_malformed'],
    [[...head, 'a 5 ' + H('A')], 'heads_hash_invalid'],
    [[...head, 'a  5 ' + H('a')], 'heads_line_malformed'],
    [[...head, 'a 5 ' + H('a') + ' x'], 'heads_line_malformed'],
    [['ledger.test', 'aer1-stream-heads/2', '10', ROOT.toString('base64'), 'a 0'], 'heads_not_a_statement'],
    [['', 'aer1-stream-heads/1', '10', ROOT.toString('base64'), 'a 0'], 'heads_origin_invalid'],
    [['o', 'aer1-stream-heads/1', '010', ROOT.toString('base64'), 'a 0'], 'heads_size_invalid'],
    [['o', 'aer1-stream-heads/1', '10', 'AAAA', 'a 0'], 'heads_root_invalid'],
  ])('refuses %j with %s', (lines, expected) => {
    expect(code(() => parseStreamHeads(text(lines as string[])))).toBe(expected);
  });

  test('refuses more than 5000 streams, and a text with CR', () => {
    const many = Array.from({ length: 5001 }, (_, i) => ({ streamId: `s${String(i).padStart(5, '0')}`, position: 0, eventHash: null }));
    expect(code(() => formatStreamHeads({ origin: ORIGIN, size: 1, rootHash: ROOT, heads: many }))).toBe('heads_too_many');
    expect(code(() => parseStreamHeads(text([...head, 'a 0']).replace('\n', '\r\n')))).toBe('heads_malformed');
  });

  test('signed with the log key it verifies; another key, another origin, an edit are refused', () => {
    const note = signStreamHeads(s, log.signer);
    const v = verifyStreamHeads(note, [parseVerifierKey(log.verifierKey)], ORIGIN);
    expect(v.statement.heads).toHaveLength(3);
    expect(code(() => verifyStreamHeads(signStreamHeads(s, other.signer), [parseVerifierKey(log.verifierKey)]))).toBe('note_no_trusted_signature');
    expect(code(() => verifyStreamHeads(note, [parseVerifierKey(log.verifierKey)], 'elsewhere.test'))).toBe('heads_origin_mismatch');
    expect(code(() => verifyStreamHeads(note.replace('receipt:0b7c 3', 'receipt:0b7c 2'), [parseVerifierKey(log.verifierKey)]))).toBe('note_signature_invalid');
  });
});

// ---------------------------------------------------------------- the check over leaves

type Ev = Omit<StoredEvent, 'event_hash'> & { event_hash: string };

/** A format 3 history (format 2 for the first `legacy` events) over `streams` picked by index. */
function history(picks: number[], legacy = 0): Ev[] {
  const out: Ev[] = [];
  const last = new Map<string, { pos: number; n: number }>();
  picks.forEach((k, i) => {
    const stream_id = `timeline:job ${k}`;
    const prev = last.get(stream_id) ?? { pos: 0, n: 0 };
    const position = i + 1;
    const base = { position, prev_hash: out.length ? out[out.length - 1].event_hash : LEDGER_GENESIS_HASH, recorded_at: '2026-12-01T00:00:00.000Z', stream_id, stream_position: prev.n + 1, type: 'TimelineEntryAppended', key_id: 'k1', key_name: 'p' };
    const e = i < legacy ? { ...base, format: 2, data: '{}' } : { ...base, format: 3, data: '', stream_prev: prev.pos, public_ids: '{}', payload_commitment: 'sha256:' + H('0') };
    out.push({ ...e, event_hash: eventHash(e) });
    last.set(stream_id, { pos: position, n: prev.n + 1 });
  });
  return out;
}

/** The reference: the newest event of the stream at or below `size`, by a plain filter. */
function referenceHead(events: Ev[], stream: string, size: number): StreamHead {
  const mine = events.filter((e) => e.stream_id === stream && e.position <= size);
  const h = mine[mine.length - 1];
  return h ? { streamId: stream, position: h.position, eventHash: h.event_hash } : { streamId: stream, position: 0, eventHash: null };
}

function check(events: Ev[], heads: StreamHead[], size: number, hide: Set<number> = new Set()) {
  const leaves = events.slice(0, size).map((e) => Buffer.from(eventHashInput(e), 'utf8'));
  const tree = TreeIntegrator.empty();
  tree.appendLeaves(leaves);
  const st = parseStreamHeads(formatStreamHeads({ origin: ORIGIN, size, rootHash: tree.root(), heads }));
  const c = new HeadsChecker(st);
  leaves.forEach((leaf, index) => c.push({ index, leaf: hide.has(index + 1) ? null : leaf, ...(hide.has(index + 1) ? { withheld: 'test' } : {}) } as ServedLeaf));
  return c.finish(tree.root());
}

describe('HeadsChecker', () => {
  test('agrees with the reference on random histories: true heads are consistent, every stale one is contradicted by the first later event', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 1000 }), (picks, r) => {
        const events = history(picks);
        const size = 1 + (r % picks.length);
        const streams = [0, 1, 2, 3, 4, 5].map((k) => `timeline:job ${k}`);
        const truth = streams.map((s) => referenceHead(events, s, size));
        const ok = check(events, truth, size);
        expect(ok.result).toBe('consistent');
        // Stale: claim the stream's previous event (or none) as its head.
        for (const t of truth.filter((h) => h.position > 0)) {
          const older = referenceHead(events, t.streamId, t.position - 1);
          const r2 = check(events, truth.map((h) => (h.streamId === t.streamId ? older : h)), size);
          const f = r2.streams.find((s) => s.stream_id === t.streamId)!;
          expect([r2.result, f.verdict, f.later?.position, f.later?.event_hash]).toEqual(['inconsistent', 'contradicted', events.find((e) => e.stream_id === t.streamId && e.position > older.position)!.position, expect.any(String)]);
        }
      }),
      { numRuns: 60 },
    );
  });

  test('a head that is another stream\'s event, or another hash, is head_mismatch', () => {
    const events = history([0, 1, 0, 1]);
    const r = check(events, [{ streamId: 'timeline:job 0', position: 2, eventHash: events[1].event_hash }, { streamId: 'timeline:job 1', position: 4, eventHash: H('c') }], 4);
    // job 0's real head is 3: contradicted wins over the mismatch; job 1 is at 4 with another hash.
    expect(r.streams.map((s) => [s.stream_id, s.verdict, s.code])).toEqual([
      ['timeline:job 0', 'contradicted', 'later_event'],
      ['timeline:job 1', 'head_mismatch', 'head_hash_mismatch'],
    ]);
  });

  test('withheld leaves after a head leave it unchecked, never consistent; a wrong root is inconsistent', () => {
    const events = history([0, 1, 1, 1]);
    const truth = [referenceHead(events, 'timeline:job 0', 4)];
    const r = check(events, truth, 4, new Set([3]));
    expect([r.result, r.streams[0].verdict, r.streams[0].code, r.leaves_unread]).toEqual(['unchecked', 'unchecked', 'withheld_after_head', 1]);
    const leaves = events.map((e) => Buffer.from(eventHashInput(e), 'utf8'));
    const c = new HeadsChecker(parseStreamHeads(formatStreamHeads({ origin: ORIGIN, size: 4, rootHash: ROOT, heads: truth })));
    leaves.forEach((leaf, index) => c.push({ index, leaf }));
    expect(c.finish(TreeIntegrator.empty().appendLeaves(leaves).root)).toMatchObject({ result: 'inconsistent', root_matches: false });
  });

  test('format 2 events are checked by stream id and named as legacy; the first format 3 position is reported', () => {
    const events = history([0, 0, 1, 0], 2);
    const r = check(events, [referenceHead(events, 'timeline:job 0', 4)], 4);
    expect([r.result, r.first_format3_position, r.streams[0].legacy_events]).toEqual(['consistent', 3, 2]);
    const stale = check(events, [referenceHead(events, 'timeline:job 0', 1)], 4);
    expect(stale.streams[0].later?.position).toBe(2);
  });
});
