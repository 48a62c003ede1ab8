/** The timeline decider, pure: given the state read in the transaction, when entries are appended or a timeline imported, then events or a 409. */
import { entryDigest, JsonObject, ZERO_DIGEST } from '../../src/core/aer1';
import { thrown } from '../helpers/errors';
import type { LedgerError } from '../../src/common/errors';
import { AppendDecider, AppendState, decideAppend, decideImport, EMPTY_HEAD, EntryToAppend } from '../../src/timelines/timelines.decider';
import { TimelineImportedData } from '../../src/timelines/timelines.events';

function chain(job: string, n: number, closeLast = true): JsonObject[] {
  const out: JsonObject[] = [];
  let prev = ZERO_DIGEST;
  for (let seq = 1; seq <= n; seq++) {
    const e: JsonObject = { seq, job_id: job, id: `r-${seq}`, tool: 't', provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: Buffer.from(`${job}/${seq}`).toString('base64'), prev_digest: prev };
    if (closeLast && seq === n) e.close = true;
    out.push(e);
    prev = entryDigest(e)!;
  }
  return out;
}

const toAppend = (e: JsonObject): EntryToAppend => ({ text: JSON.stringify(e), e, seq: e.seq as number, digest: entryDigest(e)! });

/** The state after `entries` were appended. */
function after(entries: JsonObject[]): AppendState {
  const last = entries[entries.length - 1];
  return { source: 'append', head: { seq: last.seq as number, digest: entryDigest(last)!, closed: last.close === true }, last };
}

describe('decideAppend', () => {
  const t = chain('job', 3);

  it('given no timeline, when the genesis entry and its successor are appended, then one TimelineEntryAppended each and the head moves', () => {
    const d = decideAppend({ source: null, head: EMPTY_HEAD, last: undefined }, 'job', [toAppend(t[0]), toAppend(t[1])], 'metadata');
    expect(d.events.map((e) => [e.type, e.data.seq, e.data.entry_digest, e.data.close, e.data.publication])).toEqual([
      ['TimelineEntryAppended', 1, entryDigest(t[0]), false, 'metadata'],
      ['TimelineEntryAppended', 2, entryDigest(t[1]), false, 'metadata'],
    ]);
    expect(d.head).toEqual({ seq: 2, digest: entryDigest(t[1]), closed: false });
  });

  it('given a head at seq 2, when the closing entry 3 is appended, then the head is closed', () => {
    expect(decideAppend(after(t.slice(0, 2)), 'job', [toAppend(t[2])], 'full').head).toEqual({ seq: 3, digest: entryDigest(t[2]), closed: true });
  });

  it('given no timeline, when the first entry does not carry 64 zeros, then 409 genesis_prev_digest', () => {
    const bad = { ...t[0], prev_digest: entryDigest(t[0])! };
    const e = thrown(() => decideAppend({ source: null, head: EMPTY_HEAD, last: undefined }, 'job', [toAppend(bad)], 'full'));
    expect([e.status, e.code, e.message]).toEqual([409, 'genesis_prev_digest', 'the first entry must carry 64 zeros as prev_digest (S7.2)']);
    expect(e.details).toEqual({ reasons: ['genesis_prev_digest'], expected_prev_digest: ZERO_DIGEST, job_id: 'job', index: 0, head: { seq: 0, entry_digest: null, closed: false } });
  });

  it('given a head at seq 1, when seq 3 arrives, then 409 seq_not_contiguous with the expected seq', () => {
    const e = thrown(() => decideAppend(after(t.slice(0, 1)), 'job', [toAppend(t[2])], 'full'));
    expect([e.code, e.message, e.details.expected_seq]).toEqual(['seq_not_contiguous', 'seq 3 does not extend the head: expected 2', 2]);
  });

  it('given a head at seq 1, when entry 2 links elsewhere, then 409 link_mismatch naming the recomputed digest; in an array the entry is named', () => {
    const bad = { ...t[1], prev_digest: ZERO_DIGEST };
    const one = thrown(() => decideAppend(after(t.slice(0, 1)), 'job', [toAppend(bad)], 'full'));
    expect([one.code, one.message, one.details.expected_prev_digest]).toEqual(['link_mismatch', `prev_digest must be the recomputed digest of entry 1: ${entryDigest(t[0])}`, entryDigest(t[0])]);
    const inArray = thrown(() => decideAppend({ source: null, head: EMPTY_HEAD, last: undefined }, 'job', [toAppend(t[0]), toAppend(bad)], 'full'));
    expect([inArray.code, inArray.message.endsWith('(entry 2 of the request)'), inArray.details.index]).toEqual(['link_mismatch', true, 1]);
  });

  it('given a closed timeline, when anything follows, then 409 timeline_closed before any other rule', () => {
    const closed = chain('job', 1);
    const next = { ...chain('job', 2)[1], seq: 5 };
    const e = thrown(() => decideAppend(after(closed), 'job', [toAppend(next)], 'full'));
    expect([e.code, e.message]).toEqual(['timeline_closed', 'job job is closed at seq 1: nothing follows a closing entry (S7.2)']);
  });

  it('given an imported timeline, when an entry is appended, then 409 timeline_imported', () => {
    const e = thrown(() => decideAppend({ source: 'import', head: EMPTY_HEAD, last: undefined }, 'job', [toAppend(t[0])], 'full'));
    expect([e.status, e.code, e.details]).toEqual([409, 'timeline_imported', { reasons: ['timeline_imported'], job_id: 'job' }]);
  });
});

describe('decideImport', () => {
  const data: TimelineImportedData = { job_id: 'job', raw: '[1]', verdict: 'valid', reasons: [], construction: '-07', entry_count: 1, final_entry_digest: null };

  it('given no timeline, then TimelineImported', () => {
    expect(decideImport({ source: null, imported_raw: null }, data)).toEqual({ events: [{ type: 'TimelineImported', data }] });
  });

  it('given the same text imported before, then existing; other text or an appended timeline, then 409 timeline_exists', () => {
    expect(decideImport({ source: 'import', imported_raw: '[1]' }, data)).toEqual({ existing: true });
    expect(thrown(() => decideImport({ source: 'import', imported_raw: '[2]' }, data)).message).toContain('imported with different bytes');
    expect(thrown(() => decideImport({ source: 'append', imported_raw: null }, data)).message).toContain('built by appends');
  });
});

describe('AppendDecider (entry by entry, as the OTLP receiver appends)', () => {
  const t = chain('job', 4);
  /** Push `entries` without digests (the decider computes them); the digests it gave, and what it decided or threw. */
  const run = (state: AppendState, entries: JsonObject[]): { digests: (string | null)[]; decided: unknown } => {
    const d = new AppendDecider(state, 'job', 'full', entries.length);
    const digests = entries.map((e) => d.push(JSON.stringify(e), e, e.seq as number));
    let decided: unknown;
    try {
      decided = d.decided();
    } catch (e) {
      decided = asError(e);
    }
    return { digests, decided };
  };
  const viaDecideAppend = (state: AppendState, entries: JsonObject[]): unknown => {
    try {
      return decideAppend(state, 'job', entries.map(toAppend), 'full');
    } catch (e) {
      return asError(e);
    }
  };
  /** Everything an error answers with. */
  const asError = (e: unknown): unknown =>
    summary(
      thrown(() => {
        throw e;
      }),
    );
  const summary = (e: LedgerError): unknown => ({ name: e.name, status: e.status, code: e.code, message: e.message, details: e.details });

  it('gives each entry the digest entryDigest gives, and decides what decideAppend decides', () => {
    const r = run({ source: null, head: EMPTY_HEAD, last: undefined }, t);
    expect(r.digests).toEqual(t.map((e) => entryDigest(e)));
    expect(r.decided).toEqual(viaDecideAppend({ source: null, head: EMPTY_HEAD, last: undefined }, t));
    const cont = run(after(t.slice(0, 2)), t.slice(2));
    expect(cont.digests).toEqual(t.slice(2).map((e) => entryDigest(e)));
    expect(cont.decided).toEqual(viaDecideAppend(after(t.slice(0, 2)), t.slice(2)));
  });

  it('throws, at the end, the error decideAppend throws at the first entry that breaks a rule (a gap, a bad link, an entry after the close)', () => {
    const gap = [t[0], { ...t[2] }];
    const badLink = [t[0], { ...t[1], prev_digest: 'f'.repeat(64) }, t[2]];
    const afterClose = [...chain('job', 2), chain('job', 3)[2]];
    for (const entries of [gap, badLink, afterClose]) {
      const r = run({ source: null, head: EMPTY_HEAD, last: undefined }, entries);
      const expected = viaDecideAppend({ source: null, head: EMPTY_HEAD, last: undefined }, entries);
      expect(expected).toMatchObject({ status: 409 });
      expect(r.decided).toEqual(expected);
    }
    expect(summary(thrown(() => new AppendDecider({ source: 'import', head: EMPTY_HEAD, last: undefined }, 'job', 'full', 1)))).toEqual(viaDecideAppend({ source: 'import', head: EMPTY_HEAD, last: undefined }, t));
  });
});
