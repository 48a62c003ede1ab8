import { badgeSvg, jobBadge, receiptBadge, workflowBadge } from '../../src/core/badge';
import type { JobAssessment } from '../../src/core/aer1/commitments';

const GREEN = '#1a7f37';

describe('verify badges (src/core/badge.ts)', () => {
  it('green only for a valid, current receipt of a successful call', () => {
    expect(receiptBadge('valid', null, 'ok')).toEqual({ label: 'AER-1 receipt', message: 'verified', tone: 'ok' });
    expect(receiptBadge('valid', null, undefined).tone).toBe('ok'); // core form: no transport status
    expect(receiptBadge('valid', '5f0c0c2e-6a51-4d1e-9f40-3c2b8a9d7e11', 'ok')).toEqual({ label: 'AER-1 receipt', message: 'verified, SUPERSEDED', tone: 'warn' });
    expect(receiptBadge('valid', null, 'error')).toEqual({ label: 'AER-1 receipt', message: 'verified, call status error', tone: 'warn' });
    expect(receiptBadge('invalid', null, 'ok')).toEqual({ label: 'AER-1 receipt', message: 'FAILED', tone: 'bad' });
    expect(receiptBadge('historical', null, 'ok').tone).toBe('warn');
  });

  it('a job is green only when clean; every other assessment is amber or red', () => {
    const all: JobAssessment[] = ['clean', 'truncation_not_excluded', 'historical', 'invalid', 'truncation_detected', 'final_entry_substituted', 'entry_substituted'];
    expect(all.filter((a) => jobBadge(a).tone === 'ok')).toEqual(['clean']);
    // Issue 15: clean but bound only by the producer's own (self-asserted) commitment is amber, never green.
    expect(jobBadge('clean', 'self_asserted')).toEqual({ label: 'AER-1 job', message: 'verified, end SELF-ASSERTED', tone: 'warn' });
    expect(jobBadge('clean', 'ledger_issued').tone).toBe('ok');
    expect(jobBadge('clean', 'attested_by').tone).toBe('ok');
    expect(jobBadge('truncation_not_excluded', 'self_asserted').message).toBe('TRUNCATION NOT EXCLUDED');
    expect(all.map((a) => jobBadge(a).message)).toEqual(['verified, truncation excluded', 'TRUNCATION NOT EXCLUDED', 'HISTORICAL (-06)', 'FAILED', 'TRUNCATION DETECTED', 'FINAL ENTRY SUBSTITUTED', 'ENTRY SUBSTITUTED']);
  });

  it('an outcome against the call (the deciding one is not confirmed) makes a verified receipt or a clean job red, the outcome first', () => {
    expect(receiptBadge('valid', null, 'ok', { result: 'reversed' })).toEqual({ label: 'AER-1 receipt', message: 'outcome REVERSED \u00b7 verified', tone: 'bad' });
    expect(receiptBadge('valid', '5f0c0c2e-6a51-4d1e-9f40-3c2b8a9d7e11', 'error', { result: 'failed' })).toEqual({ label: 'AER-1 receipt', message: 'outcome FAILED \u00b7 verified', tone: 'bad' });
    // Bytes that do not verify still say FAILED first; no outcome against the call keeps the old answers.
    expect(receiptBadge('invalid', null, 'ok', { result: 'reversed' }).message).toBe('FAILED');
    expect(receiptBadge('valid', null, 'ok', null).tone).toBe('ok');
    // An attacker-chosen result is cut and drawn escaped.
    const long = receiptBadge('valid', null, 'ok', { result: '<script>alert(1)</script>xxxxxxxxxxxxxxxxxxxxxx' });
    expect(long.message).toBe('outcome <SCRIPT>ALERT(1)</SCRIPT \u00b7 verified');
    expect(badgeSvg(long)).not.toContain('<SCRIPT>');
    expect(badgeSvg(long)).toContain('&lt;SCRIPT&gt;');
    expect(jobBadge('clean', 'ledger_issued', { result: 'reversed' })).toEqual({ label: 'AER-1 job', message: 'outcome REVERSED \u00b7 verified, truncation excluded', tone: 'bad' });
    expect(jobBadge('clean', 'self_asserted', { result: 'not_found' })).toEqual({ label: 'AER-1 job', message: 'outcome NOT_FOUND \u00b7 verified, end SELF-ASSERTED', tone: 'bad' });
    expect(jobBadge('truncation_detected', null, { result: 'failed' })).toEqual({ label: 'AER-1 job', message: 'outcome FAILED \u00b7 TRUNCATION DETECTED', tone: 'bad' });
    const svg = badgeSvg(receiptBadge('valid', null, 'ok', { result: 'reversed' }));
    expect(svg).toContain('<text x="');
    expect(svg).toContain('>\u2717 outcome REVERSED \u00b7 verified</text>');
    expect(svg).toContain('fill="#cf222e"');
    expect(svg).not.toContain(GREEN);
  });

  it('a workflow is green only when verified without findings', () => {
    expect(workflowBadge('verified', 0).tone).toBe('ok');
    expect(workflowBadge('verified', 2)).toEqual({ label: 'AER-1 workflow', message: 'verified, 2 FINDINGS', tone: 'warn' });
    expect(workflowBadge('incomplete', 0)).toEqual({ label: 'AER-1 workflow', message: 'INCOMPLETE', tone: 'warn' });
    expect(workflowBadge('failed', 0).tone).toBe('bad');
  });

  it('the SVG: a mark before the message (not colour alone), the checkpoint size only when given, escaped text, small', () => {
    const ok = badgeSvg(receiptBadge('valid', null, 'ok'));
    expect(ok).toContain('<text x="94.5" y="14">\u2713 verified</text>'.replace('94.5', ok.match(/<text x="([\d.]+)" y="14">\u2713/)![1]));
    expect(ok).toContain(`fill="${GREEN}"`);
    expect(ok).not.toContain('checkpoint');
    expect(ok.length).toBeLessThan(1000);
    const withCp = badgeSvg(jobBadge('truncation_detected'), 4242);
    expect(withCp).toContain('\u2717 TRUNCATION DETECTED</text>');
    expect(withCp).toContain('checkpoint 4242</text>');
    expect(withCp).not.toContain(GREEN);
    const hostile = badgeSvg(receiptBadge('valid', null, '<script>&"'));
    expect(hostile).toContain('call status &lt;script&gt;&amp;&quot;');
    expect(hostile).not.toContain('<script');
  });
});
