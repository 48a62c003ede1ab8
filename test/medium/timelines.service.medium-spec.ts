/**
 * TimelinesService (with the commitments and verification services it works with) on its real repositories (timelines, entries,
 * commitments, events) and database, without HTTP: appends decided by the
 * timeline decider, imports, endpoint commitments.
 */
import { entryDigest, ZERO_DIGEST } from '../../src/core/aer1';
import { LedgerService } from '../../src/ledger/ledger.service';
import { streams } from '../../src/ledger/streams';
import { TimelinesRepository } from '../../src/timelines/timelines.repository';
import { CommitmentsService } from '../../src/timelines/commitments.service';
import { TimelineVerificationService } from '../../src/timelines/timeline-verification.service';
import { TimelinesService } from '../../src/timelines/timelines.service';
import { LogIdentityService } from '../../src/log/log-identity.service';
import { body, DIALECTS, Medium, startMedium, timeline } from './harness';

describe.each(DIALECTS)('%s: TimelinesService (medium)', (dialect) => {
  let m: Medium;
  let sut: TimelinesService;
  beforeAll(async () => {
    m = await startMedium(dialect);
    sut = m.get(TimelinesService);
  });
  afterAll(async () => m?.close());
  const hasKey = (): boolean => m.get(LogIdentityService).current !== null;

  describe('append', () => {
    it('given an empty job, when entries are appended one request at a time, then each extends the head and the read model follows', async () => {
      const by = await m.principal('producer');
      const t = timeline('job-m-append', 3);
      const answers = [];
      for (const e of t) answers.push(await sut.append('job-m-append', body(e), by));
      expect(answers.map((a) => a.head)).toEqual([
        { seq: 1, entry_digest: entryDigest(t[0]), closed: false },
        { seq: 2, entry_digest: entryDigest(t[1]), closed: false },
        { seq: 3, entry_digest: entryDigest(t[2]), closed: true },
      ]);
      const row = await m.get(TimelinesRepository).get(m.db, 'job-m-append');
      expect(row).toMatchObject({ source: 'append', entry_count: 3, head_digest: entryDigest(t[2]), closed: true, verdict: 'valid', reasons: [], construction: '-07' });
      const events = await m.get(LedgerService).readStream(streams.timeline('job-m-append'));
      expect(events.map((e) => [e.type, e.stream_position])).toEqual([
        ['TimelineEntryAppended', 1],
        ['TimelineEntryAppended', 2],
        ['TimelineEntryAppended', 3],
        // Issue 15: the close makes the ledger issue its endpoint commitment in the same transaction, when
        // it has a log key (this harness gives SQLite one and PostgreSQL none: nothing issued there).
        ...(hasKey() ? [['EndpointCommitmentRecorded', 4]] : []),
      ]);
      if (hasKey()) expect(JSON.parse(events[3].data)).toMatchObject({ issued_by: 'ledger', entry_count_at_record: 3, binding: true });
      expect((await m.get(TimelineVerificationService).verify('job-m-append')).verdict).toBe('valid');
    });

    it('given a head at seq 1, when seq 3 arrives, then 409 seq_not_contiguous naming the head, and nothing is written', async () => {
      const by = await m.principal('producer');
      const t = timeline('job-m-gap', 3);
      await sut.append('job-m-gap', body(t[0]), by);
      const head = await m.get(LedgerService).head();
      await expect(sut.append('job-m-gap', body(t[2]), by)).rejects.toMatchObject({
        status: 409,
        code: 'seq_not_contiguous',
        message: 'seq 3 does not extend the head: expected 2',
        details: { reasons: ['seq_not_contiguous'], expected_seq: 2, job_id: 'job-m-gap', index: 0, head: { seq: 1, entry_digest: entryDigest(t[0]), closed: false } },
      });
      expect(await m.get(LedgerService).head()).toEqual(head);
    });

    it('given an array whose second entry breaks the link, then 409 link_mismatch for entry 2 and none of the array is written', async () => {
      const by = await m.principal('producer');
      const t = timeline('job-m-link', 2);
      const bad = { ...t[1], prev_digest: ZERO_DIGEST.replace(/0$/, '1') };
      await expect(sut.append('job-m-link', body([t[0], bad]), by)).rejects.toMatchObject({
        status: 409,
        code: 'link_mismatch',
        details: { index: 1, expected_prev_digest: entryDigest(t[0]), head: { seq: 1, closed: false } },
      });
      expect(await m.get(TimelinesRepository).get(m.db, 'job-m-link')).toBeNull();
    });

    it('given a closed timeline, when another entry arrives, then 409 timeline_closed', async () => {
      const by = await m.principal('producer');
      const t = timeline('job-m-closed', 1);
      await sut.append('job-m-closed', body(t[0]), by);
      const next = { ...timeline('job-m-closed', 2)[1], prev_digest: entryDigest(t[0]) };
      await expect(sut.append('job-m-closed', body(next), by)).rejects.toMatchObject({ status: 409, code: 'timeline_closed', details: { head: { seq: 1, closed: true } } });
    });
  });

  describe('import and commitments', () => {
    it('given a complete timeline, when imported twice, then one TimelineImported and the second answer is "existing"; appending to it is 409 timeline_imported', async () => {
      const by = await m.principal('producer');
      const t = timeline('job-m-import', 4);
      const text = JSON.stringify(t);
      const first = await sut.import('job-m-import', body(text), by);
      expect(first).toMatchObject({ outcome: 'created', source: 'import', verdict: 'valid', entry_count: 4, final_entry_digest: entryDigest(t[3]), closed: true });
      expect(await sut.import('job-m-import', body(text), by)).toMatchObject({ outcome: 'existing', position: first.position });
      await expect(sut.import('job-m-import', body(JSON.stringify(timeline('job-m-import', 4))), by)).rejects.toMatchObject({ status: 409, code: 'timeline_exists' });
      await expect(sut.append('job-m-import', body(t[0]), by)).rejects.toMatchObject({ status: 409, code: 'timeline_imported' });
      expect((await m.get(TimelinesRepository).entries(m.db, 'job-m-import')).map((e) => [e.seq, e.entry_digest, e.close])).toEqual(t.map((e, k) => [k + 1, entryDigest(e), k === 3]));
    });

    it('given a closed timeline, when its endpoint commitment is recorded, then it binds and truncation is excluded; the same text again is "existing"', async () => {
      const by = await m.principal('producer');
      const t = timeline('job-m-commit', 2);
      await sut.append('job-m-commit', body(t), by);
      const commitment = { job_id: 'job-m-commit', final_entry_digest: entryDigest(t[1]), entry_count: 2, published_at: '2026-10-01T12:30:00Z' };
      const first = await m.get(CommitmentsService).recordCommitment('job-m-commit', body(commitment), by);
      expect(first).toMatchObject({ outcome: 'created', binding: true, truncation_excluded: true });
      expect(await m.get(CommitmentsService).recordCommitment('job-m-commit', body(commitment), by)).toMatchObject({ outcome: 'existing', id: first.id });
      const rows = await m.get(TimelinesRepository).commitments(m.db, 'job-m-commit');
      // Issue 15: the ledger-issued commitment of the close is first; the posted one is self-asserted.
      expect(rows).toEqual([
        ...(hasKey() ? [expect.objectContaining({ issued_by: 'ledger', binding: true, entry_count_at_record: 2 })] : []),
        expect.objectContaining({ id: first.id, binding: true, reasons: [], entry_count_at_record: 2, issued_by: null, attestation: null }),
      ]);
      expect((await m.get(TimelineVerificationService).verify('job-m-commit')).commitment.status).toBe('binding');
    });
  });
});
