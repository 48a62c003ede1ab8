/**
 * The coverage PDF (src/coverage/coverage.pdf.ts): it opens (pdf-parse,
 * built on Mozilla's pdf.js) and its text holds the statuses, the evidence,
 * the digest, the checkpoint statement and the URL.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pdfTextOf } from '../helpers/pdf-text';
import { CoveragePdfInput, pdfText, renderCoveragePdf } from '../../src/coverage/coverage.pdf';
import { reportDigest } from '../../src/core/coverage/reconcile';
import type { CoverageReportContent } from '../../src/core/coverage/types';
import { fiveActionReport, manyActionReport, payReport } from './picture-fixtures';

function input(report: CoverageReportContent, extra: Partial<CoveragePdfInput> = {}): CoveragePdfInput {
  return { report, digest: reportDigest(report), digest_verified: true, report_id: '7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', issued_at: '2026-10-01T12:00:00.000Z', url: 'https://ledger.example/coverage/7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', position: 101, ...extra };
}

describe('coverage PDF', () => {
  // Each case extracts the text in a child process (pdf-text.cjs): seconds on a busy machine.
  jest.setTimeout(60_000);
  it('5 actions: opens, and holds each status with its evidence, the digest, the plan, the URL and "not yet proven against a signed checkpoint"', async () => {
    const r = fiveActionReport();
    const bytes = await renderCoveragePdf(input(r));
    writeFileSync(join(tmpdir(), 'aer1-coverage-5.pdf'), bytes);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { text, pages } = await pdfTextOf(bytes);
    expect(pages).toBeGreaterThanOrEqual(2);
    for (const s of ['COVERED', 'OUT OF ORDER', 'REPORTED ONLY', 'FAILED', 'MISSING']) expect(text).toContain(s);
    // Five action findings and the fixture's self-asserted binding commitment (issue 15).
    expect(text).toContain('Coverage: 6 FINDINGS: COMMITMENT SELF ASSERTED (commitment #1); screen: OUT OF ORDER; score: REPORTED ONLY; and 3 more (1/5 expected actions covered, 20.0%)');
    expect(text).toContain('commitment_self_asserted');
    expect(text).toMatch(/COVERED\s+fetch \(tool fetch_customer\)/);
    expect(text).toMatch(/MISSING\s+notify<script> \(tool notify_customer\)/);
    expect(text).toMatch(/evidence: seq 2, receipt [0-9a-f-]{36}, EXECUTED BY LEDGER, tool fetch_customer, outcome success \(ok\)/);
    expect(text).toMatch(/reported only: seq 3, .*LOGGED BY AGENT/);
    expect(text).toMatch(/unplanned: seq 5, .*tool delete_records/);
    expect(text).toContain(reportDigest(r));
    expect(text).toContain('not yet proven against a signed checkpoint');
    expect(text).toContain('https://ledger.example/coverage/7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6');
    expect(text).toContain('p-picture version 2');
    expect(text).toContain('2026-10-01T11:00:00.000Z at ledger position 1');
    expect(text).toContain('Endpoint commitment: binding, truncation excluded');
    expect(text).toContain('Coverage is not outcome');
    expect(text).toContain('KYC refresh <b>5</b>');
  });

  it('with a checkpoint: its size, leaf index and root are stated instead', async () => {
    const bytes = await renderCoveragePdf(input(fiveActionReport(), { checkpoint: { size: 4242, root: 'q1w2e3r4t5y6u7i8o9p0AAAAAAAAAAAAAAAAAAAAAAA=', leaf_index: 4100, url: 'https://ledger.example/checkpoint' } }));
    const { text } = await pdfTextOf(bytes);
    expect(text).toContain('proven against the signed checkpoint of tree size 4242, leaf index 4100, root q1w2e3r4t5y6u7i8o9p0AAAAAAAAAAAAAAAAAAAAAAA=');
    expect(text).not.toContain('not yet proven against a signed checkpoint');
  });

  it('a digest that does not match is said so; an offline report says it has no URL', async () => {
    const bytes = await renderCoveragePdf(input(fiveActionReport(), { digest_verified: false, url: null, report_id: null, issued_at: null, position: null }));
    const { text } = await pdfTextOf(bytes);
    expect(text).toContain('Report digest: recomputed, DOES NOT MATCH');
    expect(text).toContain('none (offline report)');
  });

  it('500 actions: every action is listed, the picture spans several pages, the size stays bounded', async () => {
    const r = manyActionReport(500);
    const bytes = await renderCoveragePdf(input(r));
    writeFileSync(join(tmpdir(), 'aer1-coverage-500.pdf'), bytes);
    expect(bytes.length).toBeLessThan(3_000_000);
    const { text, pages } = await pdfTextOf(bytes);
    expect(pages).toBeGreaterThan(10);
    expect(pages).toBeLessThan(200);
    expect(text).toContain('step-499 (tool t499)');
    expect(text).toMatch(/MISSING\s+step-017 \(tool t17\)/);
    expect(text).toContain('expected actions, continued');
  }, 60_000);

  it('a long action id is cut with an ellipsis in the picture (WinAnsi has it) and whole in the list', async () => {
    const r = fiveActionReport();
    r.actions[0].action_id = 'fetch-the-customer-record-from-crm';
    const { text } = await pdfTextOf(await renderCoveragePdf(input(r)));
    expect(text).toContain('fetch-the-customer-re\u2026');
    expect(text).toContain('fetch-the-customer-record-from-crm (tool fetch_customer)');
  });

  it('issue 27, job-pay-7 confirmed then charged back: the headline names the contradicted outcome; the payment is never COVERED ... (ok); the outcome section is there', async () => {
    const r = payReport(['outcome-settled.json', 'outcome-reversed.json']);
    const bytes = await renderCoveragePdf(input(r));
    writeFileSync(join(tmpdir(), 'aer1-coverage-pay7.pdf'), bytes);
    const { text, page_lines } = await pdfTextOf(bytes);
    // The headline, on page 1 right under the title, names the finding in words.
    expect(page_lines[0][0]).toBe('Coverage report: job job-pay-7');
    expect(page_lines[0].slice(1, 3).join(' ')).toBe('Coverage: 1 FINDING: pay: outcome CONTRADICTED (PAYMENTS reports reversed) (2/2 expected actions covered, 100.0%)');
    expect(text).toMatch(/OUTCOME CONTRADICTED\s+pay \(tool send_payment\)/);
    expect(text).not.toMatch(/COVERED\s+pay \(tool send_payment\)/);
    expect(text).toMatch(/COVERED\s+lookup \(tool fetch_customer\)/);
    expect(text).toContain('The call is recorded (covered by its receipt), but the outcome required from PAYMENTS is contradicted: PAYMENTS reports reversed.');
    // The payment's evidence says what the agent's receipt says and what the owning system says, apart.
    expect(text).toMatch(/evidence: seq 2, receipt 81f7a3a2-7faf-5ab1-b9f7-dbe9cbaf4630, EXECUTED BY LEDGER, tool send_payment, agent's receipt: success \(ok\); owning system: CONTRADICTED/);
    expect(text).not.toMatch(/tool send_payment, outcome success \(ok\)/);
    // The outcome section: counts, the status in words, both outcomes with the one that decides.
    expect(text).toContain('Outcome evidence Required outcomes: 1; confirmed 0, contradicted 1, unconfirmed 0, wrong system 0; 2 outcome report(s) matched by receipt id.');
    expect(text).toMatch(/CONTRADICTED\s+pay: requires payment.settled from PAYMENTS within 3600 s/);
    expect(text).toContain('seq 2: CONTRADICTED; agent\'s receipt: success');
    expect(text).toMatch(/outcome 4fd46f45-6445-5934-9ba0-2472057f7804: PAYMENTS reports confirmed for payment.settled, observed 2026-10-01T12:01:30Z, superseded by 2b7c81dd-4ff4-5ed7-aa5b-c1a7add87e37/);
    expect(text).toContain('outcome 2b7c81dd-4ff4-5ed7-aa5b-c1a7add87e37: PAYMENTS reports reversed for payment.settled, observed 2026-10-03T08:15:00Z, latest: decides');
  });

  it('issue 27, job-pay-7 confirmed: full coverage, green words, the outcome CONFIRMED', async () => {
    const { text } = await pdfTextOf(await renderCoveragePdf(input(payReport(['outcome-settled.json']))));
    expect(text).toContain('Coverage: FULL (2/2 expected actions covered)');
    expect(text).toMatch(/COVERED\s+pay \(tool send_payment\)/);
    expect(text).toMatch(/CONFIRMED\s+pay: requires payment.settled from PAYMENTS within 3600 s/);
    expect(text).toContain("agent's receipt: success (ok); owning system: CONFIRMED");
  });

  it('issue 27: no section heading or action heading is the last line of a page (every page of the 5-, 500-action and payment PDFs)', async () => {
    const headings = /^(Report|Plan|Integrity and commitment attestation|Picture: expected actions against the recorded timeline|Expected actions|Outcome evidence|Unplanned actions \((flagged|allowed)\)|Findings|What this report does not prove|Outcomes for calls that required none.*|(COVERED|MISSING|FAILED|OUT OF ORDER|REPORTED ONLY|OVER COUNT|OUTCOME [A-Z ]+|CONFIRMED|CONTRADICTED|UNCONFIRMED|WRONG SYSTEM)\s.*\(tool .*\)|(CONFIRMED|CONTRADICTED|UNCONFIRMED|WRONG SYSTEM)\s+\S+: requires .*)$/;
    const reports = [fiveActionReport(), manyActionReport(500), payReport(['outcome-settled.json']), payReport(['outcome-settled.json', 'outcome-reversed.json'])];
    let checked = 0;
    for (const r of reports) {
      const { page_lines, pages } = await pdfTextOf(await renderCoveragePdf(input(r)));
      expect(page_lines).toHaveLength(pages);
      page_lines.forEach((lines, p) => {
        // The last line is the footer ("... page n of m"); the one before it is the last line of content.
        expect(lines[lines.length - 1]).toMatch(new RegExp(`page ${p + 1} of ${pages}$`));
        const last = lines[lines.length - 2];
        expect({ page: p + 1, last, heading: headings.test(last) }).toEqual({ page: p + 1, last, heading: false });
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(20);
  }, 120_000);

  it('text outside the standard fonts is written out, never dropped', () => {
    expect(pdfText('a\u202Eb')).toBe('a<U+202E>b');
    expect(pdfText('caf\u00e9 \u4e2d')).toBe('caf\u00e9 <U+4E2D>');
    expect(pdfText('\u{1F600}')).toBe('<U+1F600>');
    expect(pdfText('a\u2026 \u2013 \u20ac')).toBe('a\u2026 \u2013 \u20ac'); // in WinAnsi: kept
  });
});
