/** parseLeaf is the inverse of eventHashInput: canonical leaves read back, anything else names a fixed LeafErrorCode. */
import { createHash } from 'node:crypto';
import { eventHashInput, payloadCommitment, publicIdsText } from '../../../src/core/ledger/event-hash';
import { LeafError, LeafErrorCode, parseLeaf, receiptOfEvent, withPayload } from '../../../src/core/ledger/leaf';

const EVENT = {
  format: 2,
  position: 7,
  prev_hash: 'a'.repeat(64),
  recorded_at: '2026-12-01T10:00:00.000Z',
  stream_id: 'timeline:job-1',
  stream_position: 3,
  type: 'EntryAppended',
  key_id: 'k-1',
  key_name: 'producer',
  data: '{"seq":3,"note":"caf\\u00e9"}',
} as const;

const code = (leaf: string | Uint8Array): LeafErrorCode | 'none' => {
  try {
    parseLeaf(typeof leaf === 'string' ? Buffer.from(leaf, 'utf8') : leaf);
    return 'none';
  } catch (e) {
    if (e instanceof LeafError) return e.code;
    throw e;
  }
};

describe('parseLeaf', () => {
  const none = { stream_prev: null, ids: null, payload_commitment: null };
  it('reads back a format-2 and a format-1 event exactly as eventHashInput wrote them', () => {
    expect(parseLeaf(Buffer.from(eventHashInput(EVENT), 'utf8'))).toEqual({ ...EVENT, ...none });
    const v1 = { ...EVENT, format: 1, key_id: null, key_name: null } as const;
    expect(parseLeaf(Buffer.from(eventHashInput(v1), 'utf8'))).toEqual({ ...v1, ...none });
  });

  it.each<[string, string | Uint8Array, LeafErrorCode]>([
    ['bytes that are not UTF-8', new Uint8Array([0x5b, 0xff, 0x5d]), 'leaf_not_utf8'],
    ['text that is not JSON', '["aer1-ledger-event/2",', 'leaf_not_json'],
    ['JSON that is not an array', '{"format":2}', 'leaf_not_array'],
    ['an array of another format', '["aer1-ledger-event/3",1,"",""]', 'leaf_format_unknown'],
    ['format 2 with format 1 length', eventHashInput({ ...EVENT, format: 1 }).replace('event/1', 'event/2'), 'leaf_format_unknown'],
    ['a position that is a string', eventHashInput(EVENT).replace(',7,', ',"7",'), 'leaf_field_type'],
    ['a stream position of 0', eventHashInput(EVENT).replace(',3,', ',0,'), 'leaf_field_type'],
    ['a key that is null in format 2', eventHashInput(EVENT).replace('"k-1"', 'null'), 'leaf_field_type'],
    ['the same event with a space', eventHashInput(EVENT).replace(',7,', ', 7,'), 'leaf_not_canonical'],
    ['the same event with a non-ASCII character written raw', eventHashInput(EVENT).replace('\\\\u00e9', 'é'), 'leaf_not_canonical'],
  ])('refuses %s', (_what, leaf, expected) => {
    expect(code(leaf)).toBe(expected);
  });

  it('gives the receipt verdict only for ReceiptRecorded events', () => {
    const e = parseLeaf(Buffer.from(eventHashInput(EVENT), 'utf8'));
    expect(receiptOfEvent(e)).toBeNull();
    const r = receiptOfEvent({ ...e, type: 'ReceiptRecorded', data: JSON.stringify({ id: 'r-1', raw: '{"not":"a receipt"}' }) });
    expect(r?.id).toBe('r-1');
    expect(r?.result.verdict).toBe('invalid');
  });
});

describe('format 3 (issue 29): no content in the leaf, a salted commitment to the payload', () => {
  const salt = Buffer.alloc(32, 7);
  const data = '{"id":"r-1","raw":"{\\"name\\":\\"Ada Lovelace\\"}"}';
  const commitment = 'sha256:' + createHash('sha256').update(Buffer.concat([salt, Buffer.from(data, 'utf8')])).digest('hex');
  const E3 = {
    format: 3,
    position: 9,
    prev_hash: 'b'.repeat(64),
    recorded_at: '2026-12-02T10:00:00.000Z',
    stream_id: 'receipt:r-1',
    stream_position: 1,
    stream_prev: 0,
    type: 'ReceiptRecorded',
    key_id: 'k-1',
    key_name: 'producer',
    data,
    public_ids: publicIdsText({ seq: 2, receipt_id: 'r-1', job_id: 'job-\u00e9' }),
    payload_commitment: commitment,
  };

  it('writes the fields in order, the ids sorted by name, and no byte of the data', () => {
    expect(payloadCommitment(salt, data)).toBe(commitment);
    const leaf = eventHashInput(E3);
    expect(leaf).toBe(
      '["aer1-ledger-event/3",9,"' + 'b'.repeat(64) + '","2026-12-02T10:00:00.000Z","receipt:r-1",1,0,"ReceiptRecorded","k-1","producer",{"job_id":"job-\\u00e9","receipt_id":"r-1","seq":2},"' + commitment + '"]',
    );
    expect(leaf).not.toContain('Lovelace');
    expect(leaf).not.toContain('raw');
  });

  it('reads back with its ids and commitment, data null until the payload is checked against it', () => {
    const e = parseLeaf(Buffer.from(eventHashInput(E3), 'utf8'));
    expect(e).toEqual({ format: 3, position: 9, prev_hash: 'b'.repeat(64), recorded_at: E3.recorded_at, stream_id: 'receipt:r-1', stream_position: 1, stream_prev: 0, type: 'ReceiptRecorded', key_id: 'k-1', key_name: 'producer', ids: { job_id: 'job-\u00e9', receipt_id: 'r-1', seq: 2 }, payload_commitment: commitment, data: null });
    const ok = withPayload(e, Buffer.from(data, 'utf8'), salt);
    expect(ok).toEqual({ ok: true, event: { ...e, data } });
    expect(withPayload(e, Buffer.from(data.replace('Ada', 'Eve'), 'utf8'), salt)).toMatchObject({ ok: false, code: 'payload_commitment_mismatch' });
    expect(withPayload(e, Buffer.from(data, 'utf8'), Buffer.alloc(32, 8))).toMatchObject({ ok: false, code: 'payload_commitment_mismatch' });
    expect(withPayload(e, Buffer.from(data, 'utf8'), Buffer.alloc(31, 7))).toMatchObject({ ok: false, code: 'payload_salt_invalid' });
  });

  it.each<[string, string, LeafErrorCode]>([
    ['ids out of order', eventHashInput(E3).replace('{"job_id":"job-\\u00e9","receipt_id":"r-1","seq":2}', '{"seq":2,"job_id":"job-\\u00e9","receipt_id":"r-1"}'), 'leaf_not_canonical'],
    ['white space', eventHashInput(E3).replace(',0,', ', 0,'), 'leaf_not_canonical'],
    ['an uppercase commitment', eventHashInput(E3).replace(commitment, commitment.toUpperCase().replace('SHA256', 'sha256')), 'leaf_field_type'],
    ['a commitment without its prefix', eventHashInput(E3).replace(commitment, commitment.slice(7)), 'leaf_field_type'],
    ['stream_prev not before the event', eventHashInput({ ...E3, stream_prev: 9 }), 'leaf_field_type'],
    ['an id that is not a string or integer', eventHashInput(E3).replace('"seq":2', '"seq":true'), 'leaf_field_type'],
  ])('refuses %s', (_what, leaf, expected) => {
    expect(code(leaf)).toBe(expected);
  });

  it('gives no receipt verdict from a format 3 leaf alone (the payload is not in it)', () => {
    expect(receiptOfEvent(parseLeaf(Buffer.from(eventHashInput(E3), 'utf8')))).toBeNull();
  });
});
