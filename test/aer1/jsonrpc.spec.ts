import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { receiptOfDocument, verifyReceipt } from '../../src/core/aer1';

const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: unknown }[] };
const transport = corpus.vectors.find((v) => v.id === 'transport-valid')!.input;

describe('JSON-RPC tools/call responses (guide: result._receipt verified exactly as returned)', () => {
  it('verifies result._receipt and says it was wrapped', () => {
    const r = verifyReceipt({ jsonrpc: '2.0', id: 1, result: { content: [], _receipt: transport } });
    expect(r).toMatchObject({ verdict: 'valid', wrapped_in: 'jsonrpc', form: 'transport', id: 'c90ac30c-bf8d-5452-a36f-8b58a3a40241' });
  });

  it.each([null, 'text', 42, []])('a _receipt of %j is the receipt, and it is not an object', (value) => {
    const doc = { jsonrpc: '2.0', id: 1, result: { _receipt: value } };
    expect(receiptOfDocument(doc)).toEqual(value);
    const r = verifyReceipt(doc);
    expect(r.verdict).toBe('invalid');
    expect(r.reasons).toEqual(['not_object']);
    expect(r.wrapped_in).toBe('jsonrpc');
  });

  it('returns fresh limits arrays, so one caller cannot change another result', () => {
    const a = verifyReceipt(transport);
    a.limits.push('changed');
    expect(verifyReceipt(transport).limits).not.toContain('changed');
  });
});

describe('a bare endpoint commitment', () => {
  it('is recognised as a commitment and fails for want of its timeline', async () => {
    const { detectKind, verifyDocument } = await import('../../src/core/aer1');
    const commitment = { job_id: 'job-eight', final_entry_digest: 'a'.repeat(64), entry_count: 8, published_at: '2026-10-02T08:00:00Z' };
    expect(detectKind(commitment)).toBe('commitment');
    const r = verifyDocument(commitment);
    expect(r).toMatchObject({ kind: 'commitment', verdict: 'invalid', reasons: ['missing_field:timeline'], binding: false });
  });
});
