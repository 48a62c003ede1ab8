/** Workflow findings (S8.2 step 5) and the loopback rule for PUBLIC_BASE_URL, as pure functions. */
import { stepReceiptsAtHand, workflowFindings } from '../../src/core/aer1';
import { isLoopbackUrl, publicBaseUrlWarning } from '../../src/common/urls';

const A = '0b0a0f1e-0000-4000-8000-00000000000a';
const B = '0b0a0f1e-0000-4000-8000-00000000000b';
const H = 'a'.repeat(64);
const doc = (verifyUrl: string, steps: Record<string, unknown>[]) => ({ verify_url: verifyUrl, steps });

describe('workflowFindings', () => {
  it('names each mismatch once, with the step seq; a step whose receipt is not at hand gives none', () => {
    const w = doc('https://ledger.test/workflow/x', [
      { seq: 1, receipt_id: A, receipt_hash: '0'.repeat(64), status: 'ok' },
      { seq: 2, receipt_id: B.toUpperCase(), receipt_hash: H, status: 'failed' },
    ]);
    const held = new Map<string, unknown>([
      [A, { status: 'provider_unavailable', output_hash: `sha256:${H}` }],
      [B, { status: 'ok', output_hash: `sha256:${H}` }],
    ]);
    expect(workflowFindings(w, held, 'https://ledger.test').map((f) => [f.code, f.step])).toEqual([
      ['step_status_mismatch', 1],
      ['step_receipt_hash_mismatch', 1],
      ['step_status_mismatch', 2],
    ]);
    expect(workflowFindings(w, undefined, 'https://ledger.test')).toEqual([]);
  });

  it('does not compare a status the receipt does not record (core form), nor two failure statuses', () => {
    const w = doc('https://ledger.test/w', [
      { seq: 1, receipt_id: A, receipt_hash: H, status: 'failed' },
      { seq: 2, receipt_id: B, receipt_hash: H, status: 'timeout' },
    ]);
    const held = new Map<string, unknown>([
      [A, { output_hash: `sha256:${H}` }],
      [B, { status: 'provider_unavailable', output_hash: `sha256:${H}` }],
    ]);
    expect(workflowFindings(w, held, 'https://ledger.test')).toEqual([]);
  });

  it('reports verify_url_foreign for another origin (host, scheme or port), not for this ledger', () => {
    for (const url of ['https://evil.example/workflow/x', 'http://ledger.test/workflow/x', 'https://ledger.test:8443/workflow/x']) {
      expect(workflowFindings(doc(url, []), undefined, 'https://ledger.test').map((f) => f.code)).toEqual(['verify_url_foreign']);
    }
    expect(workflowFindings(doc('https://LEDGER.test/workflow/x', []), undefined, 'https://ledger.test')).toEqual([]);
  });
});

describe('stepReceiptsAtHand', () => {
  it('is undefined (no step receipts at hand) when the ledger holds none', () => {
    expect(stepReceiptsAtHand(new Map())).toBeUndefined();
    const m = new Map<string, unknown>([[A, {}]]);
    expect(stepReceiptsAtHand(m)).toBe(m);
  });
});

describe('PUBLIC_BASE_URL', () => {
  it.each([
    ['http://localhost:3000', true],
    ['http://app.localhost', true],
    ['http://127.0.0.1:3000', true],
    ['http://127.255.0.9', true],
    ['http://[::1]:3000', true],
    ['https://ledger.example', false],
    ['http://128.0.0.1', false],
    ['http://localhost.example.com', false],
  ])('%s is loopback: %s', (url, loopback) => {
    expect(isLoopbackUrl(url)).toBe(loopback);
  });

  it('warns only when unset outside development and test', () => {
    expect(publicBaseUrlWarning(undefined, 'production', 'http://localhost:3000')).toContain('PUBLIC_BASE_URL is unset');
    expect(publicBaseUrlWarning(undefined, undefined, 'http://localhost:3000')).toContain('http://localhost:3000');
    expect(publicBaseUrlWarning(undefined, 'development', 'http://localhost:3000')).toBeNull();
    expect(publicBaseUrlWarning(undefined, 'test', 'http://localhost:3000')).toBeNull();
    expect(publicBaseUrlWarning('https://ledger.example', 'production', 'https://ledger.example')).toBeNull();
  });
});
