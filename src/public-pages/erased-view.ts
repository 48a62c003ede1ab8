/**
 * The pages of erased records (issue 29): a receipt or outcome whose content
 * was erased leads with the erasure ("Content erased on <date> by <key name>
 * (<legal basis>): <reason>"), shows the verdict recorded at ingestion as
 * recorded (never green: it cannot be re-checked), the erasure and where its
 * `PayloadsErased` event sits in the log, and no bytes, no output hash.
 */
import type { ErasureNotice, LocatedErasureNotice } from '../erasure/erased-records';
import type { TimelineViewErasure } from './timeline-view';
import { html, SafeHtml } from './html';
import { idCode, layout, limitsList, provenanceLabel, verdictBlock } from './layout';
import { logLine, logSection } from './log-view';
import { entryHref, jobHref, outcomeHref, runHref, VerdictLine } from './page-parts';
import type { OutcomePageData, ReceiptPageData } from './public-pages.service';

/** The headline line of an erased record (amber: content gone, nothing re-checked). */
export function erasureLine(e: LocatedErasureNotice): VerdictLine {
  return { tone: 'warn', text: html`<span id="erasure-statement">${e.statement}</span>`, id: 'erasure-line' };
}

/** The verdict recorded at ingestion, as recorded: neutral, never green. */
function recordedVerdictLine(verdict: string, what: string): VerdictLine {
  return { tone: 'na', text: html`Verdict recorded at ingestion: <code id="recorded-verdict">${verdict}</code> <span class="muted">(${what} can no longer be re-verified; shown as recorded, not re-run)</span>`, id: 'recorded-verdict-line' };
}

/** The erasure as a table: id (linked to its JSON), when, who, basis, reason, the `PayloadsErased` event and its log place. */
export function erasureSection(e: LocatedErasureNotice): SafeHtml {
  const loc = e.erasure_log;
  return html`<section class="box" id="erasure">
<h2>Erasure</h2>
<table class="kv">
<tr><th>Erasure</th><td>${e.url ? html`<a href="${e.url}">${idCode(e.erasure_id)}</a>` : html`<span class="muted">not in the read model</span>`}</td></tr>
<tr><th>Erased at</th><td>${idCode(e.erased_at)}</td></tr>
<tr><th>Erased by</th><td>key <code>${e.erased_by.name}</code></td></tr>
<tr><th>Legal basis</th><td id="erasure-basis">${e.legal_basis}</td></tr>
<tr><th>Reason</th><td id="erasure-reason">${e.reason}</td></tr>
<tr><th>Erasure event</th><td><code>PayloadsErased</code> at ledger position ${e.erasure_position}${loc ? html`, leaf ${loc.leaf_index}: ${logLine(loc).text} (<a href="${loc.proof_url}">proof</a>)` : ''}</td></tr>
</table>
<p class="muted">The payload and its salt were deleted for good; the record's leaf holds no content (ids, type, key, time and a salted commitment), so every proof and checkpoint stays valid.</p>
</section>`;
}

/** The receipt page of an erased receipt. */
export function erasedReceiptPage(d: ReceiptPageData, e: LocatedErasureNotice): string {
  const id = d.url.slice(d.url.lastIndexOf('/') + 1);
  const body = html`
<h1>Receipt ${idCode(id)}</h1>
${verdictBlock([erasureLine(e), recordedVerdictLine(d.recorded_verdict, 'the canonical bytes and output commitment')], html`<p>Provenance as recorded: ${provenanceLabel(d.provenance.class)}.</p>`)}
${erasureSection(e)}
<h2>Record</h2>
<table class="kv">
<tr><th>Verdict now</th><td><span class="badge warn" id="verdict-now">erased</span> <span class="muted">nothing re-verified</span></td></tr>
<tr><th>Form</th><td>${d.verification.form ?? ''}</td></tr>
<tr><th class="muted">recorded_at (ledger)</th><td>${idCode(d.recorded_at)} at ledger position ${d.position}</td></tr>
<tr id="recorded-by"><th class="muted">Recorded by</th><td>${d.recorded_by ? html`key <code>${d.recorded_by.name}</code>` : html`<span class="muted">not recorded</span>`}</td></tr>
<tr><th>Machine verifier</th><td><a href="${d.verify_url}">${idCode(d.verify_url)}</a> <span class="muted">(answers 410 Gone, verdict <code>erased</code>)</span></td></tr>
</table>
${d.timeline_positions.length ? html`<h2>Hash chain position</h2><ul>${d.timeline_positions.map((p) => html`<li><a href="${jobHref(p.job_id)}">${idCode(p.job_id)}</a>, entry <a href="${entryHref(p.job_id, p.seq)}">${p.seq}</a></li>`)}</ul>` : ''}
${d.superseded_by ? html`<p id="superseded-by">Corrected by receipt <a href="${runHref(d.superseded_by.id)}">${idCode(d.superseded_by.id)}</a>.</p>` : ''}
${logSection(d.log)}
${d.outcomes.length ? html`<h2 id="outcomes">Outcomes reported</h2><ul>${d.outcomes.map((o) => html`<li><a href="${outcomeHref(o.outcome_id)}">${o.result} by ${o.system} (${o.effect})</a></li>`)}</ul>` : ''}
<h2>Raw JSON</h2>
<p class="muted" id="raw">Erased (see above).</p>
${limitsList(d.verification.limits)}
`;
  return layout(`Receipt ${id} (content erased)`, body);
}

/** The outcome page of an erased outcome report. */
export function erasedOutcomePage(d: OutcomePageData, e: LocatedErasureNotice): string {
  const body = html`
<h1>Outcome ${idCode(d.outcome_id)}</h1>
${verdictBlock([erasureLine(e), recordedVerdictLine('valid', 'the report\'s bytes and output commitment'), { tone: 'na', text: html`System ${d.system} reported ${d.result.toUpperCase()} for effect ${d.effect} <span class="muted">(as the system stated it, observed ${d.observed_at})</span>`, id: 'outcome-result' }])}
${erasureSection(e)}
<table class="kv">
<tr><th>Answers receipt</th><td><a href="${runHref(d.receipt_id)}">${idCode(d.receipt_id)}</a></td></tr>
<tr><th>Job</th><td><a href="${jobHref(d.job_id)}">${idCode(d.job_id)}</a></td></tr>
<tr><th>Verdict now</th><td><span class="badge warn" id="verdict-now">erased</span> <span class="muted">nothing re-verified</span></td></tr>
<tr id="reported-by"><th>Reported by</th><td>${d.reported_by ? html`key <code>${d.reported_by.name}</code>` : html`<span class="muted">unknown</span>`}</td></tr>
<tr><th class="muted">recorded_at (ledger)</th><td>${idCode(d.recorded_at)} at ledger position ${d.position}</td></tr>
<tr><th>Machine verifier</th><td><a href="${d.verify_url}">${idCode(d.verify_url)}</a> <span class="muted">(answers 410 Gone, verdict <code>erased</code>)</span></td></tr>
</table>
<h2>Raw JSON</h2>
<p class="muted" id="raw">Erased (see above).</p>
${limitsList(d.verification.limits)}
`;
  return layout(`Outcome ${d.outcome_id} (content erased)`, body);
}

/**
 * The job page's notice of erased entries and commitments: which, by whom,
 * which links cannot be re-checked, and that the leaves still prove every
 * entry was recorded, in order.
 */
export function erasedEntriesNotice(e: TimelineViewErasure, entryCount: number, erasures: ErasureNotice[]): SafeHtml {
  return html`<section class="box" id="erasure">
<h2>Erased content</h2>
<ul id="erasure-statements">${erasures.map((x) => html`<li><span class="erasure-statement">${x.statement}</span> <span class="muted">(erasure <a href="${x.url}">${idCode(x.erasure_id)}</a>, PayloadsErased event at ledger position ${x.erasure_position})</span></li>`)}</ul>
<p id="erased-count">${e.entries} of ${entryCount} entries erased${e.commitments.length ? html`, and ${e.commitments.length} endpoint commitment(s) (not judged: their content is gone)` : ''}. Links recomputed now: ${e.links_rechecked}; links that join an erased entry and cannot be re-checked: ${e.links_not_rechecked}.</p>
<p>The leaves of the job's events still prove that every entry was recorded, in order: each holds its stream position and the position of the one before (format 3: ids, seq, type, key and time, no content).</p>
</section>`;
}
