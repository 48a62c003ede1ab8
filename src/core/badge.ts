/**
 * Verify badges (`GET /badge/{receipt|job|workflow}/{id}.svg`): a small flat
 * SVG stating a record's verdict, and the size of the signed checkpoint when
 * one is given. Pure: verdict in, markup out.
 *
 * Honest by construction: green (`ok`) only for a record that verifies fully
 * and is current (a receipt `valid` and not superseded; a job `clean` under
 * {@link jobAssessment}; a workflow `verified` with no findings), and never
 * while the deciding outcome of an owning system says the effect failed or
 * was reversed (issue 18: the latest outcome of a system and effect decides;
 * only `confirmed` is a success). Everything
 * else is amber or red, and the message starts with a mark (check, cross,
 * "!") so the verdict is not told by colour alone.
 */
import type { JobAssessment } from './aer1/commitments';

/** `none`: no verdict at all (the server could not re-verify now), grey. */
export type BadgeTone = 'ok' | 'warn' | 'bad' | 'none';

export interface Badge {
  /** Left part: what the record is ("AER-1 receipt"). */
  label: string;
  /** Right part: the verdict in words. */
  message: string;
  tone: BadgeTone;
}

const COLORS: Record<BadgeTone, string> = { ok: '#1a7f37', warn: '#9a6700', bad: '#cf222e', none: '#6e7781' };
const MARKS: Record<BadgeTone, string> = { ok: '\u2713', warn: '!', bad: '\u2717', none: '\u2026' };

/**
 * The badge answered instead of a verdict when the server refuses to
 * re-verify now (429: `server_busy` or the read budget is spent): grey, no
 * verdict, so an image client shows "not checked now" rather than a broken
 * image, and never a stale green.
 */
export function busyBadge(label = 'AER-1'): Badge {
  return { label, message: 'not checked now, busy', tone: 'none' };
}

/**
 * A deciding outcome against a call: the `result` (not `confirmed`) of the
 * latest outcome of an owning system for an effect, as in the outcomes read
 * model; null when no deciding outcome is against it.
 */
export type OutcomeAgainst = { result: string } | null;

/** "outcome REVERSED" (the result cut to 24 characters, upper case). */
function outcomeWords(o: { result: string }): string {
  return `outcome ${o.result.slice(0, 24).toUpperCase()}`;
}

/**
 * A receipt's badge: `verdict` of the S6 verifier re-run now (`erased`:
 * the content was erased, issue 29: grey, "content ERASED"), whether a
 * correction supersedes it (S9), its own transport `status` (a receipt of a
 * call that failed verifies, but says so), and the deciding outcome against
 * it, if any: red, the outcome first (`outcome REVERSED · verified`).
 */
export function receiptBadge(verdict: string, supersededBy: string | null, status: unknown, against: OutcomeAgainst = null): Badge {
  const label = 'AER-1 receipt';
  // Issue 29: erased content cannot be re-checked; grey, never green.
  if (verdict === 'erased') return { label, message: 'content ERASED', tone: 'none' };
  if (verdict === 'invalid') return { label, message: 'FAILED', tone: 'bad' };
  if (verdict !== 'valid') return { label, message: verdict.toUpperCase(), tone: 'warn' };
  if (against) return { label, message: `${outcomeWords(against)} \u00b7 verified`, tone: 'bad' };
  if (supersededBy) return { label, message: 'verified, SUPERSEDED', tone: 'warn' };
  if (typeof status === 'string' && status !== 'ok') return { label, message: `verified, call status ${status.slice(0, 24)}`, tone: 'warn' };
  return { label, message: 'verified', tone: 'ok' };
}

const JOB_MESSAGES: Record<JobAssessment, [string, BadgeTone]> = {
  clean: ['verified, truncation excluded', 'ok'],
  truncation_not_excluded: ['TRUNCATION NOT EXCLUDED', 'warn'],
  historical: ['HISTORICAL (-06)', 'warn'],
  invalid: ['FAILED', 'bad'],
  truncation_detected: ['TRUNCATION DETECTED', 'bad'],
  final_entry_substituted: ['FINAL ENTRY SUBSTITUTED', 'bad'],
  entry_substituted: ['ENTRY SUBSTITUTED', 'bad'],
  partly_erased: ['PARTLY ERASED', 'warn'],
};

/**
 * A job's badge: its one assessment as `GET /api/jobs/{id}/verify` answers it
 * (src/core/aer1/commitments.ts), and who stands behind the binding
 * commitment (issue 15): bound only by a self-asserted one (the producer's
 * word) is amber, as on the job page, never green. `against`: the newest
 * deciding outcome against a receipt the job's entries name, if any: the
 * badge is then red and leads with it (`outcome REVERSED · verified, ...`).
 */
export function jobBadge(assessment: JobAssessment, bindingAttestation: 'ledger_issued' | 'attested_by' | 'self_asserted' | null = null, against: OutcomeAgainst = null): Badge {
  const [message, tone] =
    assessment === 'clean' && bindingAttestation === 'self_asserted' ? (['verified, end SELF-ASSERTED', 'warn'] as const) : (JOB_MESSAGES[assessment] ?? (['UNKNOWN', 'bad'] as const));
  if (against) return { label: 'AER-1 job', message: `${outcomeWords(against)} \u00b7 ${message}`, tone: 'bad' };
  return { label: 'AER-1 job', message, tone };
}

/** A workflow's badge: `verification_status` of `GET /api/workflows/{id}/verify` and how many findings it states beside it. */
export function workflowBadge(status: 'verified' | 'incomplete' | 'failed' | 'erased', findings: number): Badge {
  const label = 'AER-1 workflow';
  if (status === 'failed') return { label, message: 'FAILED', tone: 'bad' };
  // Issue 29: step receipts erased: not re-checked, never green.
  if (status === 'erased') return { label, message: 'PARTLY ERASED', tone: 'warn' };
  if (status === 'incomplete') return { label, message: 'INCOMPLETE', tone: 'warn' };
  if (findings > 0) return { label, message: `verified, ${findings} FINDING${findings > 1 ? 'S' : ''}`, tone: 'warn' };
  return { label, message: 'verified', tone: 'ok' };
}

/** Approximate width in px of text in 11px Verdana/DejaVu Sans (wide enough; the badge never cuts text). */
export function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += /[A-Z0-9#%&@MW]/.test(ch) ? 8 : /[ilj.,:;!|' ]/.test(ch) ? 3.6 : /[mw]/.test(ch) ? 9.5 : ch.codePointAt(0)! > 0x7f ? 9 : 6.6;
  return Math.ceil(w);
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * The badge as SVG: label, mark + message, and `checkpoint N` when a signed
 * checkpoint size is given (omitted otherwise). No scripts, no external
 * references; every text escaped; 20 px high.
 */
export function badgeSvg(b: Badge, checkpointSize?: number | null): string {
  const parts: { text: string; fill: string }[] = [
    { text: b.label, fill: '#555' },
    { text: `${MARKS[b.tone]} ${b.message}`, fill: COLORS[b.tone] },
  ];
  if (typeof checkpointSize === 'number' && Number.isSafeInteger(checkpointSize) && checkpointSize >= 0) parts.push({ text: `checkpoint ${checkpointSize}`, fill: '#24292f' });
  const widths = parts.map((p) => textWidth(p.text) + 12);
  const total = widths.reduce((a, w) => a + w, 0);
  const title = parts.map((p) => p.text).join(': ');
  let x = 0;
  const rects: string[] = [];
  const texts: string[] = [];
  parts.forEach((p, i) => {
    rects.push(`<rect x="${x}" width="${widths[i]}" height="20" fill="${p.fill}"/>`);
    texts.push(`<text x="${x + widths[i] / 2}" y="14">${esc(p.text)}</text>`);
    x += widths[i];
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${total}" height="20" role="img" aria-label="${esc(title)}"><title>${esc(title)}</title>` +
    `<clipPath id="r"><rect width="${total}" height="20" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)">${rects.join('')}</g>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,Geneva,sans-serif" font-size="11">${texts.join('')}</g></svg>`
  );
}
