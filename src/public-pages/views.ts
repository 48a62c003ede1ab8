/** The public pages (S9): receipt, job timeline, workflow, index, not found. */
import { isUuid } from '../core/aer1';
import { html, safeHttpUrl, SafeHtml, seg } from './html';
import { checksTable, layout, limitsList, okBadge, verdictBadge } from './layout';
import { ReceiptPageData, WorkflowPageData } from './public-pages.service';
import { linkableReceiptId, TimelineView } from './timeline-view';

const runHref = (id: string): string => `/run/${seg(id.toLowerCase())}`;
const jobHref = (job: string): string => `/jobs/${seg(job)}`;
const workflowHref = (id: string): string => `/workflow/${seg(id.toLowerCase())}`;

function value(v: unknown): SafeHtml {
  if (typeof v === 'string') return html`<code>${v}</code>`;
  return html`<code>${JSON.stringify(v)}</code>`;
}

function receiptLink(id: unknown): SafeHtml {
  return typeof id === 'string' && isUuid(id) ? html`<a class="mono" href="${runHref(id)}">${id}</a>` : html`<code>${String(id)}</code>`;
}

function decodedPreview(b64: unknown): string | null {
  if (typeof b64 !== 'string') return null;
  try {
    const bytes = Buffer.from(b64, 'base64');
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
  } catch {
    return null;
  }
}

export function receiptPage(d: ReceiptPageData): string {
  const r = (d.receipt && typeof d.receipt === 'object' && !Array.isArray(d.receipt) ? d.receipt : {}) as Record<string, unknown>;
  const id = typeof r.id === 'string' ? r.id : d.url;
  const v = d.verification;
  const hashMatch = typeof v.declared_output_hash === 'string' && v.declared_output_hash === v.computed_output_hash;
  const preview = d.canonical_bytes_withheld ? null : decodedPreview(r.canonical_bytes);
  const body = html`
<h1>Receipt <span class="mono">${id}</span></h1>
${d.superseded_by ? html`<div class="notice bad" id="superseded-by">Superseded: this record was corrected by receipt <a href="${runHref(d.superseded_by.id)}">${d.superseded_by.id}</a>. This page still shows the original exactly as recorded (S9).</div>` : ''}
${d.supersedes ? html`<div class="notice" id="supersedes">This receipt is a correction: it supersedes receipt <a href="${runHref(d.supersedes.id)}">${d.supersedes.id}</a>.</div>` : ''}
<section class="box provenance" id="provenance">
  <div class="muted">Provenance class (S5)</div>
  <div class="class">${d.provenance.class ?? '(none)'}</div>
  <p>${d.provenance.meaning ?? 'Unknown provenance class: this record cannot be read as an execution or observation.'}</p>
  <p class="muted">${d.provenance.note}</p>
</section>
${d.workflows.length
  ? html`<section class="box" id="workflows"><strong>Part of workflow</strong><ul>${d.workflows.map(
      (w) => html`<li>Part of workflow <a class="mono" href="${workflowHref(w.workflow_id)}">${w.workflow_id}</a>${w.goal ? html` (“${w.goal}”)` : ''}, step ${w.seq}</li>`,
    )}</ul></section>`
  : ''}
${d.claimed_by_workflows.length
  ? html`<section class="box" id="claimed-workflows"><strong>Named by workflows of other owners</strong><ul>${d.claimed_by_workflows.map(
      (w) => html`<li>Claimed by ${w.claimed_by}: workflow <a class="mono" href="${workflowHref(w.workflow_id)}">${w.workflow_id}</a> names this receipt as step ${w.seq}. It was not recorded by this receipt's owner and is not this receipt's workflow.</li>`,
    )}</ul></section>`
  : ''}
<h2>Verification (re-run now)</h2>
<p>Verdict: ${verdictBadge(v.verdict)} ${v.reasons.length ? html`<span class="muted">reasons: ${v.reasons.join(', ')}</span>` : ''}</p>
<table class="kv">
<tr><th>Declared output_hash</th><td><code>${String(v.declared_output_hash ?? '')}</code></td></tr>
<tr><th>Recomputed output hash</th><td><code>${v.computed_output_hash ?? 'not computable'}</code> ${okBadge(v.computed_output_hash === null ? null : hashMatch)}</td></tr>
<tr><th>Form</th><td>${v.form ?? ''}${v.wrapped_in ? html` (taken from a ${v.wrapped_in} response's <code>result._receipt</code>)` : ''}</td></tr>
<tr><th>Machine verifier</th><td><a href="${d.verify_url}">${d.verify_url}</a></td></tr>
</table>
${checksTable(v.checks)}
<h2>Receipt fields</h2>
<table class="kv">${Object.entries(r).map(([k, val]) => html`<tr${k === 'provenance_class' ? html` class="warn"` : ''}><th>${k}</th><td>${value(val)}</td></tr>`)}
<tr><th class="muted">recorded_at (ledger)</th><td><code>${d.recorded_at}</code> at ledger position ${d.position}</td></tr>
<tr id="recorded-by"><th class="muted">Recorded by</th><td>${d.recorded_by ? html`key <code>${d.recorded_by.name}</code> <span class="muted">(${d.recorded_by.key_id})</span>` : html`<span class="muted">not recorded (written before the ledger recorded keys)</span>`}</td></tr>
</table>
${d.canonical_bytes_withheld ? html`<div class="notice" id="bytes-withheld">Canonical bytes withheld: ${d.canonical_bytes_withheld.statement}</div>` : ''}
${preview !== null ? html`<p class="muted">Decoded canonical bytes (UTF-8), for reading only:</p><pre>${preview}</pre>` : ''}
<h2>Hash chain position</h2>
${d.timeline_positions.length
  ? html`<table><thead><tr><th>Job timeline</th><th>seq</th></tr></thead><tbody>${d.timeline_positions.map(
      (p) => html`<tr><td><a href="${jobHref(p.job_id)}">${p.job_id}</a></td><td>${p.seq}</td></tr>`,
    )}</tbody></table>`
  : html`<p class="muted">This receipt is not an entry of any recorded job timeline.</p>`}
<h2>Raw JSON (exactly as stored)</h2>
${d.raw === null ? html`<p class="muted" id="raw">Withheld with the canonical bytes (see above).</p>` : html`<pre id="raw">${d.raw}</pre>`}
${limitsList([...v.limits, 'A result preview or decoded text is not the source dataset; only the canonical bytes are committed (S4).'])}
`;
  return layout(`Receipt ${id}`, body);
}

export function workflowPage(d: WorkflowPageData): string {
  const v = d.verification;
  const declaredUrl = safeHttpUrl(d.declared_verify_url);
  const stepOutcome = new Map(v.steps.map((s, i) => [i, s]));
  const statement =
    v.verification_status === 'verified'
      ? 'Every step receipt is in the ledger and verifies, the steps are ordered 1..n without repeats, and the Merkle root recomputes.'
      : v.verification_status === 'incomplete'
        ? `Incomplete: ${v.steps.filter((s) => s.receipt === 'missing').length} step receipt(s) are not recorded in this ledger, so the workflow cannot be reported verified (S8.2 step 2).`
        : `Does not verify: ${v.reasons.join(', ')}.`;
  const body = html`
<h1>Workflow <span class="mono">${v.workflow_id}</span></h1>
<section class="box">
<p><strong>Verdict:</strong> ${verdictBadge(v.verdict)} <span class="badge ${v.verification_status === 'verified' ? 'ok' : v.verification_status === 'incomplete' ? 'warn' : 'bad'}">${v.verification_status}</span></p>
<p id="statement">${statement}</p>
</section>
<table class="kv">
<tr><th>Goal</th><td>${String(d.goal ?? '')}</td></tr>
<tr><th>Status</th><td>${String(d.status ?? '')}</td></tr>
<tr><th>Session</th><td><code>${String(d.session_id ?? '')}</code></td></tr>
<tr><th>Workflow receipt id</th><td><code>${d.receipt_id}</code></td></tr>
<tr><th>Declared verify_url</th><td>${declaredUrl ? html`<a href="${declaredUrl}">${declaredUrl}</a>` : html`<code>${String(d.declared_verify_url ?? '')}</code>`}</td></tr>
<tr><th>Machine verifier</th><td><a href="${v.verify_url}">${v.verify_url}</a></td></tr>
<tr><th>Recorded</th><td>${v.recorded_at} (${v.assembled ? 'assembled by this ledger from recorded receipts' : 'recorded as received'})</td></tr>
<tr id="recorded-by"><th>Recorded by</th><td>${v.recorded_by ? html`key <code>${v.recorded_by.name}</code>` : html`<span class="muted">not recorded (written before the ledger recorded keys)</span>`}</td></tr>
</table>
<h2>Merkle root (S8.1)</h2>
<table class="kv">
<tr><th>Declared</th><td><code>${String(v.merkle_root.declared ?? '')}</code></td></tr>
<tr><th>Recomputed</th><td><code>${v.merkle_root.computed ?? 'not computable'}</code> ${okBadge(v.merkle_root.computed === null ? null : v.merkle_root.confirmed)}</td></tr>
<tr><th>Construction</th><td id="merkle-construction">${v.merkle_root.construction}</td></tr>
</table>
<h2>Output hash</h2>
<table class="kv">
<tr><th>Declared</th><td><code>${String(v.output_hash.declared ?? '')}</code></td></tr>
<tr><th>Recomputed</th><td>${v.output_hash.computed ? html`<code>${v.output_hash.computed}</code> ` : ''}${okBadge(v.output_hash.confirmed)}</td></tr>
<tr><th>Construction</th><td id="output-hash-construction">${v.output_hash.construction}</td></tr>
</table>
<h2>Steps</h2>
<table><thead><tr><th>seq</th><th>Tool</th><th>Step receipt</th><th>Provenance class</th><th>Step receipt outcome</th><th>Started / ended</th><th>Status</th></tr></thead><tbody>
${d.steps.map((s, i) => {
  const o = stepOutcome.get(i);
  const outcome = o?.receipt ?? 'not_supplied';
  const cls = outcome === 'verified' ? 'ok' : outcome === 'failed' ? 'bad' : 'warn';
  return html`<tr><td>${String(s.seq)}</td><td>${String(s.tool ?? '')}</td><td>${receiptLink(s.receipt_id)}</td><td>${o?.provenance_class ?? html`<span class="muted">unknown (receipt not at hand)</span>`}</td><td><span class="badge ${cls}">${outcome === 'missing' ? 'missing: not recorded' : outcome}</span>${o && o.reasons.length ? html` <span class="muted">${o.reasons.join(', ')}</span>` : ''}</td><td><code>${String(s.started_at ?? '')}</code><br><code>${String(s.ended_at ?? '')}</code></td><td>${String(s.status ?? '')}</td></tr>`;
})}
</tbody></table>
<p class="muted">Provenance applies per step; the workflow receipt does not upgrade the provenance of its steps (S8.2 step 6).</p>
<h2>Checks</h2>
${checksTable(v.checks)}
<h2>Raw JSON (exactly as stored)</h2>
<pre id="raw">${d.raw}</pre>
${limitsList(v.limits)}
`;
  return layout(`Workflow ${v.workflow_id}`, body);
}

export function timelinePage(t: TimelineView & { verify_url: string }): string {
  const binding = t.commitments.filter((c) => c.binding);
  const construction = t.construction === '-06' ? html`-06 <span class="badge warn">historical</span> (S7.4: never reported valid)` : html`${t.construction ?? 'undetermined'}`;
  const body = html`
<h1>Job timeline <span class="mono">${t.job_id}</span></h1>
${t.truncation_excluded
  ? ''
  : t.findings.length > 0
    ? html`<div class="notice" id="truncation">Truncation is not excluded: a recorded endpoint commitment contradicts this timeline.<ul>${t.findings.map((f) => html`<li><code>${f.code}</code>: ${f.message}</li>`)}</ul>${binding.length ? html`${binding.length} other commitment(s) bind the visible timeline; that does not hide the contradiction.` : ''}</div>`
    : html`<div class="notice" id="truncation">Truncation is not excluded: no binding endpoint commitment covers this timeline. A chain with entries removed from either end and re-linked would verify just the same; the chain alone is not truncation-proof (S7.3).</div>`}
<table class="kv">
<tr><th>Verdict</th><td>${verdictBadge(t.verdict)} ${t.reasons.length ? html`<span class="muted">${t.reasons.join(', ')}</span>` : ''}</td></tr>
<tr><th>Construction</th><td>${construction}</td></tr>
<tr><th>Entries</th><td>${t.entry_count}</td></tr>
<tr><th>Closed</th><td>${t.closed ? 'yes: the last entry closes the job' : 'no'}</td></tr>
<tr><th>Final entry digest</th><td><code>${t.final_entry_digest ?? 'not computable'}</code></td></tr>
<tr><th>Machine verifier</th><td><a href="${t.verify_url}">${t.verify_url}</a></td></tr>
</table>
<h2>Endpoint commitment</h2>
${t.commitments.length === 0
  ? html`<p>No endpoint commitment is recorded for this job.</p>`
  : html`<p>${t.truncation_excluded ? html`<span class="badge ok">binding</span> ${binding.length} of ${t.commitments.length} commitment(s) bind the visible timeline and none contradicts it: truncation and last-entry substitution are excluded up to the witness's publication.` : t.findings.length ? html`<span class="badge bad">contradicted</span> ${t.findings.length} of ${t.commitments.length} commitment(s) contradict the visible timeline (${t.commitment_status.replace(/_/g, ' ')}).` : html`<span class="badge bad">not binding</span> no recorded commitment binds the visible timeline.`}</p>
<table><thead><tr><th>Commitment</th><th>Binding</th><th>Outcome</th><th>Reasons</th><th>Witness metadata</th><th>Recorded</th></tr></thead><tbody>${t.commitments.map(
      (c) => html`<tr><td><pre>${JSON.stringify(c.commitment, null, 2)}</pre></td><td>${okBadge(c.binding)}</td><td>${c.contradicts ? html`<span class="badge bad">${c.outcome}</span>` : html`<code>${c.outcome}</code>`} ${c.detail}</td><td>${c.reasons.join(', ')}</td><td>${c.witness ? html`<table class="kv">${Object.entries(c.witness).map(([k, val]) => html`<tr><th>${k}</th><td>${value(val)}</td></tr>`)}</table>` : html`<span class="muted">none given: the commitment is only as independent as whoever published it</span>`}</td><td>${c.recorded_at}${c.recorded_by ? html`<br><span class="muted">posted by key</span> <code>${c.recorded_by.name}</code>` : ''}</td></tr>`,
    )}</tbody></table>`}
<h2>Entries</h2>
${entryPager(t)}
<table><thead><tr><th>seq</th><th>Tool</th><th>Provenance class</th><th>Receipt</th><th>Entry digest</th></tr></thead><tbody>
${t.entries.map(
  (e) => html`<tr><td>${e.seq}${e.close ? html` <span class="badge">close</span>` : ''}</td><td>${e.tool ?? ''}</td><td>${e.provenance_class ?? ''}</td><td>${linkableReceiptId(e.receipt_id) ? html`<a class="mono" href="${runHref(e.receipt_id)}">${e.receipt_id}</a>` : html`<code>${e.receipt_id ?? ''}</code>`}</td><td><code>${e.entry_digest ?? ''}</code>${e.reasons.length ? html` <span class="bad">${e.reasons.join(', ')}</span>` : ''}</td></tr>`,
)}
</tbody></table>
<h2>Checks</h2>
${checksTable(t.checks)}
${limitsList(t.limits)}
`;
  return layout(`Job ${t.job_id}`, body);
}

/** Where this page of entries sits, with links to the first and the next page (only seq numbers reach the URLs). */
function entryPager(t: TimelineView): SafeHtml {
  const p = t.page;
  const shown = t.entries.length ? html`entries ${t.entries[0].seq} to ${t.entries[t.entries.length - 1].seq} of ${t.entry_count}` : html`no entries after seq ${p.after} (of ${t.entry_count})`;
  const first = p.after > 0 ? html` <a id="first-entries" href="?limit=${p.limit}">first entries</a>` : '';
  const next = p.next_after !== null ? html` <a id="next-entries" href="?after=${p.next_after}&amp;limit=${p.limit}">next ${p.limit} entries</a>` : '';
  return html`<p class="muted" id="entry-page">Showing ${shown}.${first}${next}</p>`;
}

export function indexPage(): string {
  return layout(
    'Home',
    html`
<h1>AER-1 audit ledger</h1>
<p>An append-only, tamper-evident ledger of AI-agent execution receipts (draft-zambo-aer1-07): receipts with their canonical bytes and output commitments, hash-chained job timelines with endpoint commitments, and workflow receipts with a Merkle root over their steps.</p>
<p>Every record is public at a stable URL and re-verified whenever it is shown; nothing is ever rewritten, corrections are new receipts.</p>
<ul>
<li>Receipt pages: <code>/run/&lt;receipt id&gt;</code></li>
<li>Job timelines: <code>/jobs/&lt;job id&gt;</code></li>
<li>Workflows: <code>/workflow/&lt;workflow id&gt;</code></li>
<li>Machine verifiers: <code>/api/receipt/&lt;id&gt;/verify</code>, <code>/api/workflow/&lt;id&gt;/verify</code></li>
<li><a href="/docs">API documentation (OpenAPI)</a></li>
</ul>
<p class="muted">Every page is also available as JSON: send <code>Accept: application/json</code>.</p>
`,
  );
}

export function notFoundPage(message: string): string {
  return layout('Not found', html`<h1>Not found</h1><p>${message}</p><p><a href="/">Home</a></p>`);
}
