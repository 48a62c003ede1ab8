/**
 * ReceiptsService on its real repositories (receipts, events) and database,
 * without HTTP: ingestion, corrections (S9) and ownership.
 */
import { LedgerService } from '../../src/ledger/ledger.service';
import { streams } from '../../src/ledger/streams';
import { ReceiptsRepository } from '../../src/receipts/receipts.repository';
import { ReceiptsService } from '../../src/receipts/receipts.service';
import { body, DIALECTS, freshReceipt, Medium, startMedium } from './harness';

describe.each(DIALECTS)('%s: ReceiptsService (medium)', (dialect) => {
  let m: Medium;
  let sut: ReceiptsService;
  beforeAll(async () => {
    m = await startMedium(dialect);
    sut = m.get(ReceiptsService);
  });
  afterAll(async () => m?.close());

  describe('ingest', () => {
    it('given a valid receipt, when it is ingested twice, then it is recorded once and the second answer is "existing"', async () => {
      const by = await m.principal('producer');
      const r = freshReceipt();
      const first = await sut.ingest(body(r.text), by);
      const again = await sut.ingest(body(r.text), by);
      expect(first).toMatchObject({ outcome: 'created', id: r.id, verdict: 'valid', supersedes: null });
      expect(again).toEqual({ ...first, outcome: 'existing' });
      const events = await m.get(LedgerService).readStream(streams.receipt(r.id));
      expect(events.map((e) => [e.type, e.stream_position, e.key_id])).toEqual([['ReceiptRecorded', 1, by.key_id]]);
      const row = await m.get(ReceiptsRepository).get(m.db, r.id);
      expect(row).toMatchObject({ id: r.id, raw: r.text, position: first.position, superseded_by: null, publication: 'full' });
      expect(typeof row!.position).toBe('number');
    });

    it('given a recorded receipt, when other bytes arrive under its id, then 409 receipt_id_conflict and nothing is written', async () => {
      const by = await m.principal('producer');
      const r = freshReceipt();
      await sut.ingest(body(r.text), by);
      const head = await m.get(LedgerService).head();
      const other = JSON.stringify({ ...JSON.parse(r.text), status: 'error' });
      await expect(sut.ingest(body(other), by)).rejects.toMatchObject({ status: 409, code: 'receipt_id_conflict', details: { id: r.id } });
      expect(await m.get(LedgerService).head()).toEqual(head);
    });
  });

  describe('correct', () => {
    it('given a recorded receipt, when a correction is recorded, then the original stream gets ReceiptCorrected and its row names the correction', async () => {
      const by = await m.principal('producer');
      const original = freshReceipt();
      const correction = freshReceipt();
      await sut.ingest(body(original.text), by);
      const answer = await sut.correct(original.id, body(correction.text), by);
      expect(answer).toMatchObject({ outcome: 'created', id: correction.id, supersedes: original.id });
      const events = await m.get(LedgerService).readStream(streams.receipt(original.id));
      expect(events.map((e) => [e.type, e.stream_position, JSON.parse(e.data)])).toEqual([
        ['ReceiptRecorded', 1, expect.objectContaining({ id: original.id })],
        ['ReceiptCorrected', 2, { id: original.id, superseded_by: correction.id }],
      ]);
      expect((await sut.get(original.id)).superseded_by).toBe(correction.id);
      // The same correction again answers the record; another one is refused.
      expect(await sut.correct(original.id, body(correction.text), by)).toMatchObject({ outcome: 'existing', id: correction.id });
      await expect(sut.correct(original.id, body(freshReceipt().text), by)).rejects.toMatchObject({ status: 409, code: 'already_superseded', details: { superseded_by: correction.id } });
    });

    it('when a correction reuses the original id, then 409 correction_same_id (even for an unknown original)', async () => {
      const by = await m.principal('producer');
      const r = freshReceipt();
      await expect(sut.correct(r.id, body(r.text), by)).rejects.toMatchObject({ status: 409, code: 'correction_same_id' });
    });

    it('given a receipt of another owner, when a key corrects it, then 403 not_owner and nothing is written', async () => {
      const alice = await m.principal('producer', { owner: 'alice' });
      const bob = await m.principal('producer', { owner: 'bob' });
      const original = freshReceipt();
      await sut.ingest(body(original.text), alice);
      const head = await m.get(LedgerService).head();
      await expect(sut.correct(original.id, body(freshReceipt().text), bob)).rejects.toMatchObject({ status: 403, code: 'not_owner' });
      expect(await m.get(LedgerService).head()).toEqual(head);
      const alice2 = await m.principal('producer', { owner: 'alice' });
      expect(await sut.correct(original.id, body(freshReceipt().text), alice2)).toMatchObject({ outcome: 'created', supersedes: original.id });
    });
  });

  describe('ingestBatch', () => {
    it('given lines of which one repeats an earlier line, then one event per distinct receipt, in one transaction', async () => {
      const by = await m.principal('producer');
      const a = freshReceipt();
      const b = freshReceipt();
      const before = (await m.get(LedgerService).head())?.position ?? 0;
      const answer = await sut.ingestBatch(Buffer.from([a.text, b.text, a.text].join('\n')), by);
      expect(answer).toMatchObject({ accepted: 2, existing: 1, rejected: 0 });
      expect(answer.results.map((r) => [r.line, r.status, r.id])).toEqual([
        [1, 201, a.id],
        [2, 201, b.id],
        [3, 200, a.id],
      ]);
      expect((await m.get(LedgerService).head())!.position).toBe(before + 2);
    });
  });
});
