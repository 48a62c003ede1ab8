/**
 * The public page of a coverage report whose payload was erased (issue 29,
 * named by position): it leads with the erasure, shows what the report's
 * leaf and retained data still say (subject, plan version, as-of position,
 * the result recorded at issue: neutral, never green) and no content, no
 * digest, no picture, no PDF.
 */
import { erasureSection } from '../public-pages/erased-view';
import { html } from '../public-pages/html';
import { idCode, layout, verdictBlock } from '../public-pages/layout';
import { CheckpointRef, NO_CHECKPOINT, usableCheckpoint } from '../core/checkpoint-ref';
import type { ErasedStoredReport } from './coverage.service';

/** Render the page of an erased report; `checkpoint` is the signed checkpoint its leaf is proven against, when there is one. */
export function renderErasedCoveragePage(s: ErasedStoredReport, checkpoint?: CheckpointRef | null): string {
  const r = s.recorded;
  const isJob = 'job_id' in r.subject;
  const subjectId = 'job_id' in r.subject ? r.subject.job_id : r.subject.workflow_id;
  const subjectHref = isJob ? `/jobs/${encodeURIComponent(subjectId)}` : `/workflow/${encodeURIComponent(subjectId.toLowerCase())}`;
  const cp = usableCheckpoint(checkpoint) ? html`its leaf is proven against the signed checkpoint of tree size ${checkpoint.size} (leaf index ${checkpoint.leaf_index})` : html`${NO_CHECKPOINT}`;
  const body = html`
<h1>Coverage report: ${isJob ? 'job' : 'workflow'} <a id="subject" href="${subjectHref}">${idCode(subjectId)}</a></h1>
${verdictBlock([
  { tone: 'warn', text: html`<span id="erasure-statement">${s.erasure?.statement ?? 'Content erased'}</span>`, id: 'erasure-line' },
  { tone: 'na', text: html`Result recorded at issue: <code id="recorded-result">${r.result}</code> <span class="muted">(the report's content is gone: shown as recorded, never recomputed)</span>`, id: 'recorded-result-line' },
])}
${s.erasure ? erasureSection(s.erasure) : ''}
<h2>Record</h2>
<table class="kv">
<tr><th>Report</th><td>${idCode(s.report_id)} <a href="/api/coverage-reports/${encodeURIComponent(s.report_id)}">JSON</a></td></tr>
<tr><th>Issued</th><td>${idCode(s.issued_at)}${s.issued_by ? html` by key <code>${s.issued_by.name}</code>` : ''} at ledger position ${s.position}</td></tr>
<tr><th>Plan version</th><td>plan ${idCode(r.plan.plan_id)} version ${r.plan.version}</td></tr>
<tr><th>As of</th><td>ledger position ${r.as_of_position}</td></tr>
<tr><th>Digest</th><td><span class="badge warn" id="digest-now">erased</span> <span class="muted">nothing to recompute: the content and its digest were erased</span></td></tr>
<tr><th>Checkpoint</th><td id="checkpoint">${cp}</td></tr>
</table>
<p class="muted" id="content">The report's actions, evidence, findings and picture were erased (see above); its PDF is gone too.</p>
`;
  return layout(`Coverage report ${s.report_id} (content erased)`, body);
}
