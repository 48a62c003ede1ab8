/**
 * The public HTML page of a coverage report. Every value that came from a
 * plan, a timeline or a receipt is HTML-escaped, isolated in `<bdi>` and
 * has its invisible and bidi control characters shown (`text`, the pages'
 * `userText`); the page has no scripts and is served with a
 * Content-Security-Policy that allows none.
 */
import { plainText, userText } from '../public-pages/html';
import { ActionReport, EvidenceItem } from '../core/coverage/reconcile';
import type { StoredReport } from './coverage.service';

/** Escape text for HTML element content and double-quoted attributes. */
export function escapeHtml(s: unknown): string {
  const text = typeof s === 'string' ? s : s === null || s === undefined ? '' : JSON.stringify(s) ?? String(s);
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Element content: escaped, in `<bdi>`, invisible and bidi control characters shown ({@link userText}). */
function text(s: unknown): string {
  return userText(typeof s === 'string' ? s : s === null || s === undefined ? '' : JSON.stringify(s) ?? String(s)).value;
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}
code{font-size:13px;word-break:break-all}.s-covered{color:#17602a}.s-missing,.s-failed,.s-reported_only,.s-out_of_order,.s-over_count{color:#a11212;font-weight:600}
.cp{font:600 12px monospace;color:#a11212;background:#ffebe9;border:1px dashed #a11212;border-radius:3px;padding:0 .15em;white-space:nowrap}bdi{unicode-bidi:isolate}
.note{background:#fff7e0;border-left:4px solid #d9a400;padding:.5rem .8rem}.ok{color:#17602a}.bad{color:#a11212;font-weight:600}`;

/** Evidence items shown per list on the page; the rest are counted (the JSON report has every one). */
export const PAGE_EVIDENCE_ITEMS = 50;
/** Findings shown on the page; the rest are counted. */
export const PAGE_FINDINGS = 200;

/** "… and N more" after a list cut at `shown` items, pointing at the JSON report. */
function more(total: number, shown: number): string {
  return total > shown ? `<br><i>&hellip; and ${total - shown} more (every one is in the JSON report)</i>` : '';
}

function evidenceList(items: EvidenceItem[]): string {
  if (items.length === 0) return '&ndash;';
  return items
    .slice(0, PAGE_EVIDENCE_ITEMS)
    .map((e) => `seq ${e.seq}: <code>${text(e.receipt_id ?? '(no id)')}</code> ${text(e.provenance_class ?? 'unknown provenance')}, outcome ${text(e.outcome)}${e.receipt_status ? ` (${text(e.receipt_status)})` : ''}${e.receipt_provenance_class ? `, receipt says ${text(e.receipt_provenance_class)}` : ''}`)
    .join('<br>') + more(items.length, PAGE_EVIDENCE_ITEMS);
}

function actionRow(a: ActionReport): string {
  return `<tr><td><code>${text(a.action_id)}</code></td><td><code>${text(a.tool)}</code></td><td class="s-${escapeHtml(a.status)}">${text(a.status)}${a.conditions.length > 1 ? `<br><small>also: ${text(a.conditions.slice(1).join(', '))}</small>` : ''}</td>
<td>${text(a.min_count)}&ndash;${a.max_count === null ? '&infin;' : text(a.max_count)}; ${a.must_succeed ? 'must succeed' : 'outcome not required'}; accepts ${text(a.accepted_provenance.join(', '))}${a.after.length ? `; after ${text(a.after.join(', '))}` : ''}</td>
<td>${evidenceList(a.evidence)}${a.over_count_evidence.length ? `<br><b>over count:</b><br>${evidenceList(a.over_count_evidence)}` : ''}${a.reported_only_evidence.length ? `<br><b>reported only:</b><br>${evidenceList(a.reported_only_evidence)}` : ''}</td><td>${text(a.detail)}</td></tr>`;
}

/** Render the report page. */
export function renderCoveragePage(s: StoredReport): string {
  const r = s.report;
  const subject = 'job_id' in r.subject ? `job ${r.subject.job_id}` : `workflow ${r.subject.workflow_id}`;
  const i = r.integrity;
  const c = i.commitment;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Coverage report ${plainText(String(s.report_id))}</title><style>${STYLE}</style></head><body>
<h1>Coverage report: ${text(subject)}</h1>
<p>Result: <b class="${r.result === 'full_coverage' ? 'ok' : 'bad'}">${text(r.result === 'full_coverage' ? 'full coverage' : `${r.findings.length} finding(s)`)}</b>.
Coverage ${text(r.coverage.ratio)} expected actions covered (${text(r.coverage.percent)}%), as of ledger position ${text(r.as_of_position)}.</p>
<p>Report <code>${text(s.report_id)}</code>, issued ${text(s.issued_at)}. Digest <code>${text(s.digest)}</code>
(<span class="${s.digest_verified ? 'ok' : 'bad'}">${s.digest_verified ? 'recomputed: matches' : 'recomputed: DOES NOT MATCH'}</span>; SHA-256 over the canonical JSON of the report content, see docs/coverage.md).
<a href="/api/coverage-reports/${encodeURIComponent(s.report_id)}">JSON</a></p>

<h2>Plan</h2>
<p>${text(r.plan.title)}: plan <code>${text(r.plan.plan_id)}</code> version ${text(r.plan.version)}, registered ${text(r.plan.registered_at)} at ledger position ${text(r.plan.registered_position)}; digest <code>${text(r.plan.digest)}</code>.
Unplanned actions: ${text(r.plan.unplanned)}.${r.plan.superseded_versions.length ? ` Supersedes version(s) ${text(r.plan.superseded_versions.join(', '))}.` : ''}</p>
${r.plan.registered_after_execution_began ? `<p class="note"><b>Registered after execution began</b>: this plan version was recorded at position ${text(r.plan.registered_position)}, after the first recorded event of the job at position ${text(r.plan.execution_first_position)}. It could have been written to fit what was recorded.</p>` : ''}

<h2>Integrity</h2>
<table><tr><th>${i.kind === 'timeline' ? 'Timeline' : 'Workflow receipt'}</th><td>${i.recorded ? `verdict <b>${text(i.verdict)}</b>${i.reasons.length ? ` (${text(i.reasons.join(', '))})` : ''}; ${text(i.entry_count)} ${i.kind === 'timeline' ? 'entries' : 'steps'}${i.final_entry_digest ? `; final entry digest <code>${text(i.final_entry_digest)}</code>` : ''}` : 'not recorded'}</td></tr>
<tr><th>Endpoint commitment</th><td><b>${text(c.state.replace('_', '-'))}</b>; truncation ${text(c.truncation.replace('_', ' '))}. ${text(c.statement)}</td></tr>
${(i.commitments ?? []).map((x) => `<tr><th>Commitment <code>${text(x.commitment)}</code>${x.recorded_position === null ? '' : ` (position ${text(x.recorded_position)})`}</th><td><span class="${x.contradicts ? 'bad' : x.binding ? 'ok' : ''}">${text(x.outcome)}</span>: ${text(x.detail)}</td></tr>`).join('\n')}</table>

<h2>Expected actions</h2>
<table><tr><th>Action</th><th>Tool</th><th>Status</th><th>Expectation</th><th>Evidence (entry seq, receipt id)</th><th>Detail</th></tr>
${r.actions.map(actionRow).join('\n')}</table>
<p>Counts: ${text(Object.entries(r.counts).map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`).join(', '))}.</p>

<h2>Unplanned actions (${text(r.unplanned.policy === 'flag' ? 'flagged' : 'allowed')})</h2>
${r.unplanned.actions.length ? `<p>${evidenceList(r.unplanned.actions)}</p>` : '<p>None recorded.</p>'}

<h2>Findings</h2>
${r.findings.length ? `<ul>${r.findings.slice(0, PAGE_FINDINGS).map((f) => `<li><code>${text(f.code)}</code>: ${text(f.message)}</li>`).join('')}</ul>${more(r.findings.length, PAGE_FINDINGS)}` : '<p>None.</p>'}

<h2>What this report does not prove</h2>
<ul>${r.does_not_prove.map((t) => `<li>${text(t)}</li>`).join('')}</ul>
</body></html>
`;
}
