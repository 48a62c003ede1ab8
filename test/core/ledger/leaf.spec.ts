/** parseLeaf is the inverse of eventHashInput: canonical leaves read back, anything else names a fixed LeafErrorCode. */
import { eventHashInput } from '../../../src/core/ledger/event-hash';
import { LeafError, LeafErrorCode, parseLeaf, receiptOfEvent } from '../../../src/core/ledger/leaf';

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
  it('reads back a format-2 and a format-1 event exactly as eventHashInput wrote them', () => {
    expect(parseLeaf(Buffer.from(eventHashInput(EVENT), 'utf8'))).toEqual(EVENT);
    const v1 = { ...EVENT, format: 1, key_id: null, key_name: null } as const;
    expect(parseLeaf(Buffer.from(eventHashInput(v1), 'utf8'))).toEqual(v1);
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
