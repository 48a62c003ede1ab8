/** The job timeline page (S9): its headline, entries, commitments and pager. */
import { html, SafeHtml } from './html';
import { checksTable, idCode, layout, limitsList, okBadge, provenanceLabel, shortId, Tone, verdictBadge, verdictBlock } from './layout';
import { JobOutcomeAgainst } from './public-pages.service';
import { linkableReceiptId, TimelineEntryView, TimelineView } from './timeline-view';
import { logSection } from './log-view';
import type { ErasureNotice } from '../erasure/erased-records';
import { erasedEntriesNotice } from './erased-view';
import { erasedHeadline } from '../timelines/timeline-verification.service';
import type { LogLocation } from '../log/log-answers';
import { outcomeHref, receiptLink, runHref, unrecordedReceipt, value, VerdictLine } from './page-parts';

/**
 * The job page's headline: the chain verdict together with the commitment
 * judgement (S7, S7.3). Only a valid chain with a binding ledger-issued or
 * attested commitment and no contradiction is green; one bound only by
 * self-asserted commitments is amber (issue 15); a contradiction is red even
 * when the chain verifies; no binding commitment is amber; historical (-06)
 * is never green.
 */
export function timelineHeadline(t: Pick<TimelineView, 'verdict' | 'reasons' | 'construction' | 'truncation_excluded' | 'commitment_status' | 'findings' | 'binding_attestation' | 'entry_count'> & { erased?: TimelineView['erased'] }): { tone: Tone; text: string } {
  const contradiction = t.findings.length > 0 || t.commitment_status === 'truncation_detected' || t.commitment_status === 'final_entry_substituted' || t.commitment_status === 'entry_substituted';
  const what = (t.findings[0]?.code ?? t.commitment_status).replace(/_/g, ' ').toUpperCase();
  // Issue 29: erased entries leave links that cannot be re-checked: amber, never "valid"; a contradiction still leads, red.
  if (t.verdict === 'partly_erased' && t.erased) {
    const e = t.erased;
    const words = erasedHeadline(e, t.entry_count);
    return contradiction ? { tone: 'bad', text: `${what}: a recorded endpoint commitment contradicts this timeline (${words})` } : { tone: 'warn', text: words };
  }
  if (t.verdict === 'historical' || t.construction === '-06') return { tone: 'warn', text: `Historical (-06) timeline: never reported valid (S7.4)${contradiction ? `; ${what}` : ''}` };
  if (t.verdict === 'invalid') return { tone: 'bad', text: `Chain INVALID${t.reasons.length ? `: ${t.reasons.join(', ')}` : ''}` };
  if (t.verdict !== 'valid') return { tone: 'warn', text: `Chain ${t.verdict.toUpperCase()}${t.reasons.length ? `: ${t.reasons.join(', ')}` : ''}` };
  // The contradiction leads; that the chain itself verifies comes after it (issue 27: a red headline never opens with "valid").
  if (contradiction) return { tone: 'bad', text: `${what}: a recorded endpoint commitment contradicts this timeline (the chain itself is valid)` };
  if (t.truncation_excluded && t.binding_attestation === 'self_asserted') return { tone: 'warn', text: 'Chain valid — bound only by a self-asserted endpoint commitment (the producer\'s own word)' };
  if (t.truncation_excluded) return { tone: 'ok', text: `Chain valid — truncation excluded by a binding ${t.binding_attestation === 'attested_by' ? 'attested' : 'ledger-issued'} endpoint commitment` };
  const erasedCommitments = t.erased?.commitments.length ?? 0;
  // Issue 29: commitments recorded and erased since are not judged; "no endpoint commitment" would say none was recorded.
  const none = erasedCommitments > 0 ? `${erasedCommitments} endpoint commitment${erasedCommitments === 1 ? '' : 's'} recorded and erased since, not judged` : t.commitment_status === 'absent' ? 'no endpoint commitment' : 'no binding endpoint commitment';
  return { tone: 'warn', text: `Chain valid — truncation not excluded (${none})` };
}

/** The headline's subtitle word for the endpoint commitments: their status, and how many were recorded and erased since (issue 29). */
function commitmentsWord(t: Pick<TimelineView, 'commitment_status' | 'erased'>): SafeHtml {
  const n = t.erased?.commitments.length ?? 0;
  if (n === 0) return html`<code>${t.commitment_status}</code>`;
  const erased = html`<span id="commitments-erased">${n} recorded and erased since (not judged)</span>`;
  return t.commitment_status === 'absent' ? erased : html`<code>${t.commitment_status}</code>; ${erased}`;
}

export function timelinePage(t: TimelineView & { verify_url: string; log?: LogLocation | null; outcome_against?: JobOutcomeAgainst | null; erasures?: ErasureNotice[] }): string {
  const binding = t.commitments.filter((c) => c.binding);
  const construction = t.construction === '-06' ? html`-06 <span class="badge warn">historical</span> (S7.4: never reported valid)` : html`${t.construction ?? 'undetermined'}`;
  const head = timelineHeadline(t);
  const o = t.outcome_against ?? null;
  // An outcome against one of the job's calls leads, red (issue 18); the chain's verdict comes after it.
  const against: VerdictLine[] = o
    ? [{ tone: 'bad', text: html`Outcome: <a href="${outcomeHref(o.outcome_id)}">${o.result.toUpperCase()} by ${o.system} (${o.effect})</a> for receipt <a href="${runHref(o.receipt_id)}">${shortId(o.receipt_id)}</a>, observed ${idCode(o.observed_at)}${o.count > 1 ? html`; ${o.count - 1} more outcome(s) against this job's calls` : ''}`, id: 'outcome-verdict' }]
    : [];
  // Failed calls lead before the chain's verdict: a valid chain records them faithfully; it does not mean they succeeded.
  const failed: VerdictLine[] = t.failed_calls > 0
    ? [{ tone: 'bad', text: `${t.failed_calls} of ${t.calls} calls failed (recorded status not ok): a valid chain proves only that the record is intact`, id: 'failed-calls' }]
    : [];
  const body = html`
<h1>Job timeline ${idCode(t.job_id)}</h1>
${verdictBlock([...against, ...failed, { tone: head.tone, text: head.text, id: 'verdict-line' }], html`<p>Chain verdict ${verdictBadge(t.verdict)}; endpoint commitments: ${commitmentsWord(t)}; ${t.entry_count} entries.</p>`)}
${t.erased ? erasedEntriesNotice(t.erased, t.entry_count, t.erasures ?? []) : ''}
${t.truncation_excluded
  ? ''
  : t.findings.length > 0
    ? html`<div class="notice bad" id="truncation">Truncation is not excluded: a recorded endpoint commitment contradicts this timeline.<ul>${t.findings.map((f) => html`<li><code>${f.code}</code>: ${f.message}</li>`)}</ul>${binding.length ? html`${binding.length} other commitment(s) bind the visible timeline; that does not hide the contradiction.` : ''}</div>`
    : html`<div class="notice" id="truncation">Truncation is not excluded: no binding endpoint commitment covers this timeline. A chain with entries removed from either end and re-linked would verify just the same; the chain alone is not truncation-proof (S7.3).</div>`}
<div class="scroll"><table class="kv">
<tr><th>Chain verdict</th><td>${verdictBadge(t.verdict)} ${t.reasons.length ? html`<span class="muted">${t.reasons.join(', ')}</span>` : ''}</td></tr>
<tr><th>Construction</th><td>${construction}</td></tr>
<tr><th>Entries</th><td>${t.entry_count}${t.failed_calls > 0 ? html` <span class="bad">(${t.failed_calls} failed calls)</span>` : ''}</td></tr>
<tr><th>Closed</th><td>${t.closed ? 'yes: the last entry closes the job' : 'no'}</td></tr>
<tr><th>Final entry digest</th><td>${idCode(t.final_entry_digest ?? 'not computable')}</td></tr>
<tr><th>Machine verifier</th><td><a href="${t.verify_url}">${idCode(t.verify_url)}</a></td></tr>
</table></div>
<h2 id="commitments">Endpoint commitment</h2>
${t.commitments.length === 0
  ? t.erased && t.erased.commitments.length > 0
    ? html`<p><span class="badge warn">content erased</span> ${t.erased.commitments.length} endpoint commitment(s) were recorded for this job; their content was erased, so none is judged and truncation is not excluded.</p>`
    : html`<p>No endpoint commitment is recorded for this job.</p>`
  : html`<p>${t.truncation_excluded && t.binding_attestation === 'self_asserted' ? html`<span class="badge warn">binding, self-asserted</span> ${binding.length} of ${t.commitments.length} commitment(s) bind the visible timeline and none contradicts it, but every binding one is self-asserted: the producer's own word, signed by no key trusted here. Any witness it names is a claim.` : t.truncation_excluded ? html`<span class="badge ok">binding</span> ${binding.length} of ${t.commitments.length} commitment(s) bind the visible timeline and none contradicts it (${t.binding_attestation === 'ledger_issued' ? 'one is issued by this ledger' : 'one is attested by a trusted key'}): truncation and last-entry substitution are excluded up to its publication.` : t.findings.length ? html`<span class="badge bad">contradicted</span> ${t.findings.length} of ${t.commitments.length} commitment(s) contradict the visible timeline (${t.commitment_status.replace(/_/g, ' ')}).` : html`<span class="badge bad">not binding</span> no recorded commitment binds the visible timeline.`}</p>
${t.commitments.map(
      (c) => html`<section class="box commitment" id="commitment-${c.id}"><div class="scroll"><table class="kv">
<tr><th>Outcome</th><td>${c.contradicts ? html`<span class="badge bad">${c.outcome}</span>` : c.binding && c.attestation.kind !== 'self_asserted' ? html`<span class="badge ok">${c.outcome}</span>` : html`<span class="badge warn">${c.outcome}</span>`} ${c.detail}</td></tr>
<tr><th>Binding</th><td>${c.binding && c.attestation.kind === 'self_asserted' ? html`<span class="badge warn">yes, self-asserted</span>` : okBadge(c.binding)}${c.reasons.map((x) => html`<br>${idCode(x)}`)}</td></tr>
<tr class="attestation"><th>Who stands behind it</th><td>${attestationBadge(c.attestation)} ${c.attestation.detail}${c.attestation.problem ? html`<br><span class="bad">${c.attestation.problem}</span>` : ''}</td></tr>
<tr><th>Commitment</th><td><pre>${JSON.stringify(c.commitment, null, 2)}</pre></td></tr>
<tr><th>${c.attestation.kind === 'self_asserted' ? "Witness metadata (the poster's claim)" : 'Witness metadata'}</th><td>${c.witness ? html`${c.attestation.kind === 'self_asserted' ? html`<p class="muted claim">Claimed by the poster, not checked: no key trusted here signed this commitment.</p>` : ''}<ul class="witness">${Object.entries(c.witness).map(([k, val]) => html`<li><strong>${k}</strong>: ${value(val)}</li>`)}</ul>` : html`<span class="muted">none given: the commitment is only as independent as whoever published it</span>`}</td></tr>
${c.note ? html`<tr><th>Signed note</th><td><details><summary>the note (its text is the commitment's JSON text and a newline)</summary><pre>${c.note}</pre></details></td></tr>` : ''}
<tr><th>Recorded</th><td>${idCode(c.recorded_at)}${c.issued_by === 'ledger' ? html` <span class="muted">issued by this ledger when the timeline closed${c.recorded_by ? html` (in the request of key <code>${c.recorded_by.name}</code>)` : ''}</span>` : c.recorded_by ? html` <span class="muted">posted by key</span> <code>${c.recorded_by.name}</code>` : ''} <span class="muted">(commitment ${idCode(c.id)})</span></td></tr>
</table></div></section>`,
    )}`}
<h2>Entries</h2>
${entryPager(t)}
<div class="scroll"><table><thead><tr><th>seq</th><th>Tool</th><th>Provenance class</th><th>Receipt</th><th>Entry digest</th></tr></thead><tbody>
${t.entries.map(
  (e) => html`<tr id="entry-${e.seq}"${e.failed_status !== null ? html` class="failed-call"` : e.erased ? html` class="erased"` : ''}><td>${e.seq}${e.close ? html` <span class="badge">close</span>` : ''}</td><td>${e.tool ?? ''}${callStatus(e)}</td><td>${provenanceLabel(e.provenance_class)}</td><td>${entryReceipt(e)}</td><td>${e.erased ? html`<span class="badge warn erased">content erased</span> <span class="muted">links not re-checkable</span>` : html`${shortId(e.entry_digest ?? '')}${e.reasons.length ? html` <span class="bad">${e.reasons.join(', ')}</span>` : ''}`}</td></tr>`,
)}
</tbody></table></div>
<h2>Checks</h2>
${checksTable(t.checks)}
${t.log ? html`${logSection(t.log)}<p class="muted">The job's newest event is shown: each entry is a leaf of its own, and the newest one's inclusion covers the chain that links every entry to the one before.</p>` : ''}
${limitsList(t.limits)}
`;
  return layout(`Job ${t.job_id}`, body);
}

/** Who stands behind a commitment, as a badge: never green for a self-asserted one. */
function attestationBadge(a: TimelineView['commitments'][number]['attestation']): SafeHtml {
  if (a.kind === 'ledger_issued') return html`<span class="badge ok">ledger-issued</span>`;
  if (a.kind === 'attested_by') return html`<span class="badge ok">attested by ${a.by.join(', ')}</span>`;
  return html`<span class="badge warn">self-asserted</span>`;
}

/** A failed call's marker (red, with the recorded status); nothing for a call recorded as ok or without a status. */
function callStatus(e: TimelineEntryView): SafeHtml | '' {
  return e.failed_status === null ? '' : html`<span class="badge bad call-failed">call failed: ${e.failed_status}</span>`;
}

/** An entry's receipt: linked only when this ledger holds it; otherwise the id and "not recorded". */
function entryReceipt(e: TimelineEntryView): SafeHtml {
  if (!linkableReceiptId(e.receipt_id)) return shortId(e.receipt_id ?? '');
  if (e.receipt_recorded === false) return unrecordedReceipt(e.receipt_id);
  return receiptLink(e.receipt_id);
}

/** Where this page of entries sits, with links to the first and the next page (only seq numbers reach the URLs). */
function entryPager(t: TimelineView): SafeHtml {
  const p = t.page;
  const shown = t.entries.length ? html`entries ${t.entries[0].seq} to ${t.entries[t.entries.length - 1].seq} of ${t.entry_count}` : html`no entries after seq ${p.after} (of ${t.entry_count})`;
  const first = p.after > 0 ? html` <a id="first-entries" href="?limit=${p.limit}">first entries</a>` : '';
  const next = p.next_after !== null ? html` <a id="next-entries" href="?after=${p.next_after}&amp;limit=${p.limit}">next ${p.limit} entries</a>` : '';
  return html`<p class="muted" id="entry-page">Showing ${shown}.${first}${next}</p>`;
}

