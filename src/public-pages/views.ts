/** The public pages (S9): receipt, outcome, workflow, index, not found (the job timeline page: timeline-page.ts). */
import { html, safeHttpUrl, SafeHtml } from './html';
import { checksTable, idCode, layout, limitsList, okBadge, provenanceLabel, shortId, Tone, verdictBadge, verdictBlock } from './layout';
import { OutcomePageData, ReceiptOutcomeView, ReceiptPageData, WorkflowPageData } from './public-pages.service';
import { logSection } from './log-view';
import { anchorsSection } from './anchor-view';
import { erasedOutcomePage, erasedReceiptPage } from './erased-view';
import { entryHref, jobHref, leadWithFailure, outcomeHref, receiptLink, runHref, unrecordedReceipt, value, VerdictLine, workflowHref } from './page-parts';


/**
 * The tone of a system's result: only a `confirmed` that no later outcome of
 * the same system and effect supersedes is shown green; a superseded
 * confirmation is a warning, anything else bad.
 */
function outcomeResultTone(result: string, superseded: boolean): Tone {
  if (result !== 'confirmed') return 'bad';
  return superseded ? 'warn' : 'ok';
}

/**
 * The outcomes reported against a receipt, newest first, with who reported
 * them and which later outcome supersedes each (the latest of a system and
 * effect wins). Each is the reporting system's word, accepted only from a
 * key that speaks for it.
 */
function outcomesTable(list: ReceiptOutcomeView[], current?: string): SafeHtml {
  if (list.length === 0) return html`<p class="muted" id="outcomes-none">No outcome has been reported against this receipt by the system that owns its effect.</p>`;
  // A list, not a table: each outcome wraps at any width, its result first (phones see it without scrolling sideways).
  return html`<ul id="outcomes-list" class="outcomes">${list.map(
    (o) =>
      html`<li class="${o.superseded_by ? 'superseded' : 'latest'}"><span class="badge ${outcomeResultTone(o.result, o.superseded_by !== null)}">${o.result}</span> system ${o.system} reports ${o.result} for effect ${o.effect}, observed ${idCode(o.observed_at)}.<br>${
        o.superseded_by ? html`<span class="muted">Superseded by <a href="${outcomeHref(o.superseded_by)}">${shortId(o.superseded_by)}</a> (a later outcome of the same system and effect).</span>` : html`<span class="muted">The latest of this system and effect.</span>`
      } Reported by ${o.reported_by ? html`key <code>${o.reported_by.name}</code>` : html`<span class="muted">an unknown key</span>`}, ledger position ${o.position}. ${o.outcome_id === current ? html`<strong>This outcome.</strong>` : html`<a href="${outcomeHref(o.outcome_id)}">Outcome ${shortId(o.outcome_id)}</a>`}</li>`,
  )}</ul>`;
}


export function outcomePage(d: OutcomePageData): string {
  if (d.erased) return erasedOutcomePage(d, d.erased);
  const v = d.verification;
  const o = (d.outcome && typeof d.outcome === 'object' && !Array.isArray(d.outcome) ? d.outcome : {}) as Record<string, unknown>;
  const preview = d.canonical_bytes_withheld ? null : decodedPreview(o.canonical_bytes);
  const hashMatch = v.declared_output_hash !== null && v.declared_output_hash === v.computed_output_hash;
  const headline = verdictBlock(
    // A reversal, a failure or a superseded confirmation leads; the commitment's validity follows (issue 27).
    leadWithFailure([
      v.verdict === 'valid'
        ? { tone: 'ok', text: html`Commitment: VALID: the stored bytes match the output commitment`, id: 'verdict-line' }
        : { tone: 'bad', text: html`Commitment: ${v.verdict.toUpperCase()}: ${v.reasons.length ? v.reasons.join(', ') : 'the outcome report does not verify'}`, id: 'verdict-line' },
      {
        tone: outcomeResultTone(d.result, d.superseded_by !== null),
        text: html`System ${d.system} reports ${d.result.toUpperCase()} for effect ${d.effect} <span class="muted">(as the system states it, observed ${d.observed_at}${d.superseded_by ? '; superseded' : ''})</span>`,
        id: 'outcome-result',
      },
      ...(d.superseded_by ? [{ tone: 'warn' as Tone, text: html`Superseded: a later outcome of the same system and effect, <a href="${outcomeHref(d.superseded_by.id)}">${idCode(d.superseded_by.id)}</a>, is the one that counts`, id: 'superseded-line' }] : []),
    ]),
    html`<p class="muted">An outcome is the word of the system that owns the effect, accepted only from a key that speaks for it. It does not change the provenance of the call it answers (S5).</p>`,
  );
  const body = html`
<h1>Outcome ${idCode(d.outcome_id)}</h1>
${headline}
<table class="kv">
<tr><th>Answers receipt</th><td><a href="${runHref(d.receipt_id)}">${idCode(d.receipt_id)}</a></td></tr>
<tr><th>Job</th><td><a href="${jobHref(d.job_id)}">${idCode(d.job_id)}</a></td></tr>
<tr><th>System</th><td id="outcome-system">${d.system}</td></tr>
<tr><th>Effect</th><td id="outcome-effect">${d.effect}</td></tr>
<tr><th>Result</th><td>${d.result}</td></tr>
<tr><th>Observed at</th><td>${idCode(d.observed_at)}</td></tr>
<tr id="reported-by"><th>Reported by</th><td>${d.reported_by ? html`key <code>${d.reported_by.name}</code> <span class="muted">(${idCode(d.reported_by.key_id)})</span>` : html`<span class="muted">unknown</span>`}</td></tr>
<tr><th class="muted">recorded_at (ledger)</th><td>${idCode(d.recorded_at)} at ledger position ${d.position}</td></tr>
</table>
<h2>Verification (re-run now)</h2>
<table class="kv">
<tr><th>Declared output_hash</th><td>${idCode(v.declared_output_hash ?? '')}</td></tr>
<tr><th>Recomputed output hash</th><td>${idCode(v.computed_output_hash ?? 'not computable')} ${okBadge(v.computed_output_hash === null ? null : hashMatch)}</td></tr>
<tr><th>Machine verifier</th><td><a href="${d.verify_url}">${idCode(d.verify_url)}</a></td></tr>
</table>
${checksTable(v.checks)}
<h2>Outcomes of this receipt (newest first)</h2>
${outcomesTable(d.others, d.outcome_id)}
${d.canonical_bytes_withheld ? html`<div class="notice" id="bytes-withheld">Canonical bytes withheld by the publication setting of the reporting key (S13): served to authenticated auditors only.</div>` : ''}
${preview !== null ? html`<p class="muted">Decoded canonical bytes (UTF-8), for reading only:</p><pre>${preview}</pre>` : ''}
<h2>Raw JSON (exactly as stored)</h2>
${d.raw === null ? html`<p class="muted" id="raw">Withheld with the canonical bytes.</p>` : html`<pre id="raw">${d.raw}</pre>`}
${limitsList(v.limits)}
`;
  return layout(`Outcome ${d.outcome_id}`, body);
}

/**
 * What a receipt says of its own execution (`status`, `verification_status`,
 * as sent), apart from the ledger's verdict on its bytes: a transport
 * receipt with `status` other than "ok" is a failed execution whose bytes
 * may still match their commitment.
 */
export function executionOutcome(r: Record<string, unknown>): { tone: Tone; text: SafeHtml } {
  const status = r.status;
  if (status === undefined) return { tone: 'na', text: html`Execution outcome: not stated (the receipt has no <code>status</code> field)` };
  if (status === 'ok') return { tone: 'ok', text: html`Execution outcome: OK (<code>status</code> "ok", as the receipt states)` };
  return { tone: 'bad', text: html`Execution outcome: FAILED (${typeof status === 'string' ? status : JSON.stringify(status)})` };
}

/**
 * The headline lines of the outcomes that decide for a receipt (`list`
 * newest first; the latest outcome of a system and effect decides, issue
 * 18): `against`, the newest deciding outcome whose result is not
 * `confirmed` (red, linking to it; how many more are against the call), and
 * `confirmed`, one green line per deciding confirmation when none is
 * against it.
 */
export function decidingOutcomeLines(list: ReceiptOutcomeView[]): { against: VerdictLine | null; confirmed: VerdictLine[] } {
  const deciding = list.filter((o) => o.superseded_by === null);
  const against = deciding.filter((o) => o.result !== 'confirmed');
  const say = (o: ReceiptOutcomeView, rest: number): SafeHtml =>
    html`Outcome: <a href="${outcomeHref(o.outcome_id)}">${o.result.toUpperCase()} by ${o.system} (${o.effect})</a>, observed ${idCode(o.observed_at)}${rest > 0 ? html`; ${rest} more outcome(s) against this call below` : ''}`;
  if (against.length > 0) return { against: { tone: 'bad', text: say(against[0], against.length - 1), id: 'outcome-verdict' }, confirmed: [] };
  return { against: null, confirmed: deciding.map((o, i) => ({ tone: 'ok' as Tone, text: say(o, 0), id: `outcome-verdict${i ? `-${i + 1}` : ''}` })) };
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
  if (d.erased) return erasedReceiptPage(d, d.erased);
  const r = (d.receipt && typeof d.receipt === 'object' && !Array.isArray(d.receipt) ? d.receipt : {}) as Record<string, unknown>;
  const id = typeof r.id === 'string' ? r.id : d.url;
  const v = d.verification;
  const hashMatch = typeof v.declared_output_hash === 'string' && v.declared_output_hash === v.computed_output_hash;
  const preview = d.canonical_bytes_withheld ? null : decodedPreview(r.canonical_bytes);
  const outcome = executionOutcome(r);
  const declaredStatus = r.verification_status;
  const commitment: VerdictLine =
    v.verdict === 'valid'
      ? { tone: 'ok', text: html`Commitment: VALID: the stored bytes match the output commitment`, id: 'verdict-line' }
      : { tone: 'bad', text: html`Commitment: ${v.verdict.toUpperCase()}: ${v.reasons.length ? v.reasons.join(', ') : 'the receipt does not verify'}`, id: 'verdict-line' };
  const decided = decidingOutcomeLines(d.outcomes);
  // The receipt's status is the agent's claim: when the owning system's deciding outcome is against it, it is worded so, second and never green.
  const execution: VerdictLine = decided.against && outcome.tone === 'ok' ? { tone: 'warn', text: html`The receipt reports ok (its <code>status</code> "ok" is the agent's claim; the outcome above decides)`, id: 'execution-outcome' } : { ...outcome, id: 'execution-outcome' };
  const headline = verdictBlock(
    [
      // An outcome against the call leads (issue 18), then the receipt's own claim, then the bytes; otherwise a failed
      // call leads with its failure (the largest line), the commitment's validity second (issue 27).
      ...(decided.against ? [decided.against, execution, commitment] : leadWithFailure([commitment, execution, ...decided.confirmed])),
      ...(declaredStatus === undefined
        ? []
        : [{ tone: (declaredStatus === 'verified' ? 'ok' : 'warn') as Tone, text: html`Producer's verification_status: ${typeof declaredStatus === 'string' ? declaredStatus : JSON.stringify(declaredStatus)} (as sent; this ledger does not change it)`, id: 'declared-verification-status' }]),
    ],
    html`<p>Provenance: ${provenanceLabel(d.provenance.class)}. <span class="muted">A verdict on the bytes is not an execution outcome, and neither upgrades provenance (S5).</span></p>`,
  );
  const body = html`
<h1>Receipt ${idCode(id)}</h1>
${headline}
${d.superseded_by ? html`<div class="notice bad" id="superseded-by">Superseded: this record was corrected by receipt <a href="${runHref(d.superseded_by.id)}">${idCode(d.superseded_by.id)}</a>. This page still shows the original exactly as recorded (S9).</div>` : ''}
${d.supersedes ? html`<div class="notice" id="supersedes">This receipt is a correction: it supersedes receipt <a href="${runHref(d.supersedes.id)}">${idCode(d.supersedes.id)}</a>.</div>` : ''}
<section class="box provenance${d.provenance.kind === 'logged' ? ' logged' : ''}" id="provenance">
  <div class="muted">Provenance class (S5)</div>
  <div class="class">${d.provenance.class ?? '(none)'}</div>
  <p>${d.provenance.meaning ?? 'Unknown provenance class: this record cannot be read as an execution or observation.'}</p>
  <p class="muted">${d.provenance.note}</p>
</section>
${d.workflows.length
  ? html`<section class="box" id="workflows"><strong>Part of workflow</strong><ul>${d.workflows.map(
      // S8.3: the workflow reference links to the workflow's declared verify_url (when a safe http(s) URL), saying so.
      (w) =>
        html`<li>Part of workflow <a href="${w.link_to === 'declared_verify_url' ? w.link : workflowHref(w.workflow_id)}" data-link-to="${w.link_to}">${idCode(w.workflow_id)}</a>${w.goal ? html` (“${w.goal}”)` : ''}, step ${w.seq} <span class="muted">${
          w.link_to === 'declared_verify_url' ? html`(links to the workflow's declared verify_url; <a href="${workflowHref(w.workflow_id)}">this ledger's page</a>)` : html`(links to this ledger's page: the workflow declares no usable verify_url)`
        }</span></li>`,
    )}</ul></section>`
  : ''}
${d.claimed_by_workflows.length
  ? html`<section class="box" id="claimed-workflows"><strong>Named by workflows of other owners</strong><ul>${d.claimed_by_workflows.map(
      (w) => html`<li>Claimed by ${w.claimed_by}: workflow <a href="${workflowHref(w.workflow_id)}">${idCode(w.workflow_id)}</a> names this receipt as step ${w.seq}. It was not recorded by this receipt's owner and is not this receipt's workflow.</li>`,
    )}</ul></section>`
  : ''}
<h2>Verification (re-run now)</h2>
<p>Verdict on the bytes: ${verdictBadge(v.verdict)} ${v.reasons.length ? html`<span class="muted">reasons: ${v.reasons.join(', ')}</span>` : ''} <span class="muted">(whether the stored bytes match the output commitment; the execution outcome is shown above, apart from it)</span></p>
<table class="kv">
<tr><th>Declared output_hash</th><td>${idCode(String(v.declared_output_hash ?? ''))}</td></tr>
<tr><th>Recomputed output hash</th><td>${idCode(v.computed_output_hash ?? 'not computable')} ${okBadge(v.computed_output_hash === null ? null : hashMatch)}</td></tr>
<tr><th>Form</th><td>${v.form ?? ''}${v.wrapped_in ? html` (taken from a ${v.wrapped_in} response's <code>result._receipt</code>)` : ''}</td></tr>
<tr><th>Machine verifier</th><td><a href="${d.verify_url}">${idCode(d.verify_url)}</a></td></tr>
</table>
${checksTable(v.checks)}
<h2>Receipt fields</h2>
<table class="kv">${Object.entries(r).map(([k, val]) => html`<tr${k === 'provenance_class' ? html` class="warn"` : ''}><th>${k}</th><td>${k === 'provenance_class' ? provenanceLabel(val) : value(val)}</td></tr>`)}
<tr><th class="muted">recorded_at (ledger)</th><td>${idCode(d.recorded_at)} at ledger position ${d.position}</td></tr>
<tr id="recorded-by"><th class="muted">Recorded by</th><td>${d.recorded_by ? html`key <code>${d.recorded_by.name}</code> <span class="muted">(${idCode(d.recorded_by.key_id)})</span>` : html`<span class="muted">not recorded (written before the ledger recorded keys)</span>`}</td></tr>
</table>
${d.canonical_bytes_withheld ? html`<div class="notice" id="bytes-withheld">Canonical bytes withheld: ${d.canonical_bytes_withheld.statement}</div>` : ''}
${preview !== null ? html`<p class="muted">Decoded canonical bytes (UTF-8), for reading only:</p><pre>${preview}</pre>` : ''}
<h2>Hash chain position</h2>
${d.timeline_positions.length
  ? html`<table><thead><tr><th>Job timeline</th><th>seq</th></tr></thead><tbody>${d.timeline_positions.map(
      (p) => html`<tr><td><a href="${jobHref(p.job_id)}">${idCode(p.job_id)}</a></td><td><a href="${entryHref(p.job_id, p.seq)}">${p.seq}</a></td></tr>`,
    )}</tbody></table>`
  : html`<p class="muted">This receipt is not an entry of any job timeline recorded by its owner.</p>`}
${d.claimed_by_timelines.length
  ? html`<ul id="claimed-timelines">${d.claimed_by_timelines.map(
      (p) => html`<li>Claimed by ${p.claimed_by}: entry ${p.seq} of the job timeline <a href="${jobHref(p.job_id)}">${p.job_id}</a> names this receipt. That timeline was not recorded by this receipt's owner.</li>`,
    )}</ul>`
  : ''}
${logSection(d.log)}
${anchorsSection(d.anchors)}
<h2 id="outcomes">Outcomes reported by the systems that own the effect</h2>
<p class="muted">Newest first. Each is the reporting system's observation, accepted only from a key that speaks for that system; a later outcome of the same system and effect supersedes an earlier one. None changes this receipt or its provenance.</p>
${outcomesTable(d.outcomes)}
<h2>Raw JSON (exactly as stored)</h2>
${d.raw === null ? html`<p class="muted" id="raw">Withheld with the canonical bytes (see above).</p>` : html`<pre id="raw">${d.raw}</pre>`}
${limitsList([...v.limits, 'A result preview or decoded text is not the source dataset; only the canonical bytes are committed (S4).'])}
`;
  return layout(`Receipt ${id}`, body);
}

/**
 * The workflow's steps that declare a status other than "ok", as a bad
 * headline line (it leads: issue 27), or nothing when every step that
 * declares a status says "ok".
 */
function stepFailureLine(steps: WorkflowPageData['steps']): VerdictLine[] {
  const failed = steps.filter((s) => s.status !== undefined && s.status !== null && s.status !== 'ok');
  if (failed.length === 0) return [];
  const named = failed.slice(0, 3).map((s) => `step ${String(s.seq)}: ${typeof s.status === 'string' ? s.status : JSON.stringify(s.status)}`);
  return [{ tone: 'bad', text: html`Execution outcome: ${failed.length} of ${steps.length} step(s) did not succeed (${named.join('; ')}${failed.length > 3 ? `; and ${failed.length - 3} more` : ''})`, id: 'execution-outcome' }];
}

export function workflowPage(d: WorkflowPageData): string {
  const v = d.verification;
  const declaredUrl = safeHttpUrl(d.declared_verify_url);
  const stepOutcome = new Map(v.steps.map((s, i) => [i, s]));
  const erasedSteps = v.steps.filter((s) => s.receipt === 'erased').length;
  const statement =
    v.verification_status === 'verified'
      ? 'Every step receipt is in the ledger and verifies, the steps are ordered 1..n without repeats, and the Merkle root recomputes.'
      : v.verification_status === 'incomplete'
        ? `Incomplete: ${v.steps.filter((s) => s.receipt === 'missing').length} step receipt(s) are not recorded in this ledger, so the workflow cannot be reported verified (S8.2 step 2).`
        : v.verification_status === 'erased'
          ? `Partly erased: the content of ${erasedSteps} step receipt(s) was erased (issue 29), so they can no longer be re-checked; every other check holds. The workflow is not reported verified.`
          : `Does not verify: ${v.reasons.join(', ')}.`;
  const missing = v.steps.filter((s) => s.receipt === 'missing').length;
  const nf = v.findings.length;
  const headline =
    v.verification_status === 'verified'
      ? nf === 0
        ? { tone: 'ok' as Tone, text: html`Workflow VERIFIED` }
        : // Findings beside the verdict (S8.2 step 5) keep it from being green, as on its badge; they are named here (issue 27).
          { tone: 'warn' as Tone, text: html`Workflow VERIFIED, ${`${nf} FINDING${nf === 1 ? '' : 'S'}: ${v.findings.slice(0, 3).map((f) => `${f.code.replace(/_/g, ' ')}${f.step === null ? '' : ` (step ${f.step})`}`).join('; ')}${nf > 3 ? `; and ${nf - 3} more` : ''}`}` }
      : v.verification_status === 'incomplete'
        ? { tone: 'warn' as Tone, text: html`Workflow INCOMPLETE: ${missing} step receipt(s) not recorded` }
        : v.verification_status === 'erased'
          ? { tone: 'warn' as Tone, text: html`Workflow PARTLY ERASED: ${erasedSteps} step receipt(s) erased, not re-checked` }
          : { tone: 'bad' as Tone, text: html`Workflow DOES NOT VERIFY` };
  const body = html`
<h1>Workflow ${idCode(v.workflow_id)}</h1>
${verdictBlock(leadWithFailure([{ ...headline, id: 'verdict-line' }, ...stepFailureLine(d.steps)]), html`<p id="statement">${statement}</p><p class="muted">Verdict <code>${v.verdict}</code>, verification_status <code>${v.verification_status}</code>.</p>`)}
${v.findings.length
  ? html`<section class="box" id="findings"><strong>Findings (beside the verdict, S8.2 step 5)</strong><ul>${v.findings.map(
      (f) => html`<li><code>${f.code}</code>${f.step === null ? '' : html` (step ${f.step})`}: ${f.message}</li>`,
    )}</ul></section>`
  : ''}
<div class="scroll"><table class="kv">
<tr><th>Goal</th><td>${String(d.goal ?? '')}</td></tr>
<tr><th>Status</th><td>${String(d.status ?? '')}</td></tr>
<tr><th>Session</th><td>${idCode(String(d.session_id ?? ''))}</td></tr>
<tr><th>Workflow receipt id</th><td>${idCode(d.receipt_id)}</td></tr>
<tr><th>Declared verify_url</th><td>${declaredUrl ? html`<a href="${declaredUrl}">${idCode(declaredUrl)}</a>` : idCode(String(d.declared_verify_url ?? ''))}</td></tr>
<tr><th>Machine verifier</th><td><a href="${v.verify_url}">${idCode(v.verify_url)}</a></td></tr>
<tr><th>Recorded</th><td>${v.recorded_at} (${v.assembled ? 'assembled by this ledger from recorded receipts' : 'recorded as received'})</td></tr>
<tr id="recorded-by"><th>Recorded by</th><td>${v.recorded_by ? html`key <code>${v.recorded_by.name}</code>` : html`<span class="muted">not recorded (written before the ledger recorded keys)</span>`}</td></tr>
</table></div>
<h2>Merkle root (S8.1)</h2>
<table class="kv">
<tr><th>Declared</th><td>${idCode(String(v.merkle_root.declared ?? ''))}</td></tr>
<tr><th>Recomputed</th><td>${idCode(v.merkle_root.computed ?? 'not computable')} ${okBadge(v.merkle_root.computed === null ? null : v.merkle_root.confirmed)}</td></tr>
<tr><th>Construction</th><td id="merkle-construction">${v.merkle_root.construction}</td></tr>
</table>
<h2>Output hash</h2>
<table class="kv">
<tr><th>Declared</th><td>${idCode(String(v.output_hash.declared ?? ''))}</td></tr>
<tr><th>Recomputed</th><td>${v.output_hash.computed ? html`${idCode(v.output_hash.computed)} ` : ''}${okBadge(v.output_hash.confirmed)}</td></tr>
<tr><th>Construction</th><td id="output-hash-construction">${v.output_hash.construction}</td></tr>
</table>
<h2>Steps</h2>
<div class="scroll"><table><thead><tr><th>seq</th><th>Tool</th><th>Step receipt</th><th>Provenance class</th><th>Step receipt outcome</th><th>Started / ended</th><th>Status</th></tr></thead><tbody>
${d.steps.map((s, i) => {
  const o = stepOutcome.get(i);
  const outcome = o?.receipt ?? 'not_supplied';
  const cls = outcome === 'verified' ? 'ok' : outcome === 'failed' ? 'bad' : 'warn';
  // Only a receipt this ledger holds is linked; a missing one says so instead of linking to "Not found".
  const at = outcome === 'verified' || outcome === 'failed' || outcome === 'erased';
  return html`<tr><td>${String(s.seq)}</td><td>${String(s.tool ?? '')}</td><td>${at ? receiptLink(s.receipt_id) : outcome === 'missing' ? unrecordedReceipt(s.receipt_id) : shortId(String(s.receipt_id ?? ''))}</td><td>${provenanceLabel(o?.provenance_class)}</td><td><span class="badge ${cls}">${outcome === 'missing' ? 'missing: not recorded' : outcome === 'erased' ? 'erased: not re-checked' : outcome}</span>${o && o.reasons.length ? html` <span class="muted">${o.reasons.join(', ')}</span>` : ''}</td><td><code class="nowrap">${String(s.started_at ?? '')}</code><br><code class="nowrap">${String(s.ended_at ?? '')}</code></td><td>${String(s.status ?? '')}</td></tr>`;
})}
</tbody></table></div>
<p class="muted">Provenance applies per step; the workflow receipt does not upgrade the provenance of its steps (S8.2 step 6).</p>
<h2>Checks</h2>
${checksTable(v.checks)}
${logSection(d.log)}
<h2>Raw JSON (exactly as stored)</h2>
<pre id="raw">${d.raw}</pre>
${limitsList(v.limits)}
`;
  return layout(`Workflow ${v.workflow_id}`, body);
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
<li>Outcomes reported by the systems that own effects: <code>/outcome/&lt;outcome id&gt;</code></li>
<li>Machine verifiers: <code>/api/receipts/&lt;id&gt;/verify</code>, <code>/api/workflows/&lt;id&gt;/verify</code></li>
<li><a href="/docs">API documentation (OpenAPI)</a></li>
</ul>
<p class="muted">Every page is also available as JSON: send <code>Accept: application/json</code>.</p>
`,
  );
}

export function notFoundPage(message: string): string {
  // The message names the id asked for: one line (scrolled when long), never broken inside the id.
  return layout('Not found', html`<h1>Not found</h1><p>${idCode(message)}</p><p><a href="/">Home</a></p>`);
}

/**
 * The page shown instead of a record whose read-model row differs from its
 * ledger event (409 `projection_mismatch`): says so, names the table and the
 * position, and shows none of the record.
 */
export function projectionMismatchPage(d: { message: string; table: string; position: number | null }): string {
  return layout(
    'Record not served',
    html`<h1>Record not served</h1>${verdictBlock([
      { tone: 'bad', text: 'This record does not match the ledger: it is not shown, and nothing about it is verified here.' },
    ])}<p>The stored copy the page is built from (table <code>${d.table}</code>${d.position === null ? '' : html`, ledger position <code>${String(d.position)}</code>`}) differs from the event the ledger recorded.</p><p class="muted">${d.message}</p><p><a href="/">Home</a></p>`,
  );
}
