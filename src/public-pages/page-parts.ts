/** Pieces the public pages share: their links, a field value, a receipt link, the order of a verdict block's lines. */
import { isUuid } from '../core/aer1';
import { html, SafeHtml, seg } from './html';
import { idCode, shortId, Tone } from './layout';

export const runHref = (id: string): string => `/run/${seg(id.toLowerCase())}`;
export const jobHref = (job: string): string => `/jobs/${seg(job)}`;
export const workflowHref = (id: string): string => `/workflow/${seg(id.toLowerCase())}`;
export const outcomeHref = (id: string): string => `/outcome/${seg(id.toLowerCase())}`;

/** One line of a verdict block. */
export type VerdictLine = { tone: Tone; text: SafeHtml | string; id?: string };

/**
 * The lines of a verdict block in the order shown: the first bad line (else
 * the first warning) moves to the top when a better line is before it, so a
 * block framed red or amber never leads, in its largest line, with a green
 * one (issue 27); otherwise the order is kept.
 */
export function leadWithFailure(lines: VerdictLine[]): VerdictLine[] {
  const rank = (t: Tone): number => (t === 'bad' ? 0 : t === 'warn' ? 1 : 2);
  const lead = lines.reduce((best, l, i) => (rank(l.tone) < rank(lines[best].tone) ? i : best), 0);
  return lead === 0 ? lines : [lines[lead], ...lines.slice(0, lead), ...lines.slice(lead + 1)];
}

/** The job page showing entry `seq` (its page starts there), at the entry's row. */
export const entryHref = (job: string, seq: number): string => `/jobs/${seg(job)}?after=${Math.max(0, seq - 1)}#entry-${seq}`;

/** A field value: a string on one line (scrolled when long), anything else as its JSON, wrapped in a scroller. */
export function value(v: unknown): SafeHtml {
  if (typeof v === 'string') return idCode(v);
  const json = JSON.stringify(v);
  return json !== undefined && json.length > 80 ? html`<pre class="value">${JSON.stringify(v, null, 2)}</pre>` : idCode(json ?? String(v));
}

/** A link to a receipt page whose id stays on one line (a UUID is short enough to show whole). */
export function receiptLink(id: unknown): SafeHtml {
  if (typeof id === 'string' && isUuid(id)) return html`<a href="${runHref(id)}">${idCode(id)}</a>`;
  return shortId(String(id ?? ''));
}

/** A receipt id whose receipt this ledger does not hold: shown, not linked, and said so. */
export function unrecordedReceipt(id: unknown): SafeHtml {
  return html`${shortId(String(id ?? ''))} <span class="badge warn not-recorded">receipt not recorded in this ledger</span>`;
}
