/**
 * The public HTML page of a coverage report. Every value that came from a
 * plan, a timeline or a receipt is HTML-escaped, isolated in `<bdi>` and
 * has its invisible and bidi control characters shown (`text`, the pages'
 * `userText`); the page has no scripts and is served with a
 * Content-Security-Policy that allows none.
 */
import { unsafeRaw, userText } from '../public-pages/html';
import { layout, provenanceLabel, Tone, verdictBlock } from '../public-pages/layout';
import { ActionReport, EvidenceItem, RecordedBySection } from '../core/coverage/reconcile';
import type { OutcomeItem } from '../core/coverage/outcomes';
import type { StoredReport } from './coverage.service';
import { COVERED_ERASED_STYLE, coveredWithErasedEvidence, layoutCoveragePicture } from '../core/coverage/picture';
import { coverageSvg } from '../core/coverage/picture-svg';
import { absentWords, coverageHeadline, outcomeOverride, outcomeReason, OUTCOME_WORDS } from '../core/coverage/headline';
import { CheckpointRef, NO_CHECKPOINT, usableCheckpoint } from '../core/checkpoint-ref';
import { safeHttpUrl } from '../public-pages/html';

/** Escape text for HTML element content and double-quoted attributes. */
export function escapeHtml(s: unknown): string {
  const text = typeof s === 'string' ? s : s === null || s === undefined ? '' : JSON.stringify(s) ?? String(s);
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Element content: escaped, in `<bdi>`, invisible and bidi control characters shown ({@link userText}). */
function text(s: unknown): string {
  return userText(typeof s === 'string' ? s : s === null || s === undefined ? '' : JSON.stringify(s) ?? String(s)).value;
}

/** Page-specific additions to the site's stylesheet (src/public-pages/layout.ts). */
const STYLE = `<style>.s-covered{color:var(--ok);font-weight:600}.s-missing,.s-failed,.s-reported_only,.s-out_of_order,.s-over_count{color:var(--bad);font-weight:600}
.s-covered::before{content:"\\2713\\00a0"}.s-missing::before,.s-failed::before,.s-reported_only::before,.s-out_of_order::before,.s-over_count::before{content:"\\2717\\00a0"}
.note{background:#fff8c5;border-left:4px solid var(--warn);padding:.5rem .8rem}.ok{color:var(--ok)}.bad{color:var(--bad);font-weight:600}
ul.evidence{margin:0;padding-left:1rem}ul.evidence li{margin:.15rem 0}
.s-erased{color:var(--warn);font-weight:600}.s-erased::before{content:"\\2713\\00a0"}.s-outcome{color:var(--bad);font-weight:600}.s-outcome::before{content:"\\2717\\00a0"}.s-outcome small{color:var(--fg);font-weight:400}
.o-confirmed{color:var(--ok);font-weight:600}.o-contradicted,.o-unconfirmed,.o-wrong_system{color:var(--bad);font-weight:600}
.o-confirmed::before{content:"\\2713\\00a0"}.o-contradicted::before,.o-unconfirmed::before,.o-wrong_system::before{content:"\\2717\\00a0"}
.picture{overflow:auto;max-height:80vh;max-width:100%;border:1px solid #d0d7de;background:#fff}.picture svg{display:block;max-width:none;height:auto}</style>`;

/** Evidence items shown per list on the page; the rest are counted (the JSON report has every one). */
export const PAGE_EVIDENCE_ITEMS = 50;
/** Findings shown on the page; the rest are counted. */
export const PAGE_FINDINGS = 200;

/** "… and N more" after a list cut at `shown` items, pointing at the JSON report. */
function more(total: number, shown: number): string {
  return total > shown ? `<br><i>&hellip; and ${total - shown} more (every one is in the JSON report)</i>` : '';
}

/** A one-line, selectable identifier (never broken mid-token; scrolled when wider than its box). */
function id(s: unknown): string {
  return `<code class="id">${text(s)}</code>`;
}

/** Links for a report's subject: its job page (entries at their rows) or its workflow page. */
interface Links {
  /** The page of the entry (job) or step (workflow) with this seq. */
  entry(seq: number): string;
}

/**
 * Evidence items, each linked to its entry and, when this ledger holds the
 * receipt, to the receipt's page; an unrecorded receipt is said so, not linked.
 */
function evidenceList(items: EvidenceItem[], links: Links, outcome?: ActionReport['outcome']): string {
  if (items.length === 0) return '&ndash;';
  // An action that requires an outcome: each call's outcome status beside what the agent's receipt says (issue 27).
  const judged = new Map((outcome?.evidence ?? []).map((x) => [x.seq, x.status] as const));
  return `<ul class="evidence">${items
    .slice(0, PAGE_EVIDENCE_ITEMS)
    .map((e) => {
      const receipt = e.receipt_id === null ? 'no receipt id' : e.receipt_recorded ? `<a href="/run/${encodeURIComponent(e.receipt_id.toLowerCase())}">${id(e.receipt_id)}</a>` : `${id(e.receipt_id)} <span class="badge warn">receipt not recorded</span>`;
      return `<li><a href="${escapeHtml(links.entry(e.seq))}">seq ${Number(e.seq)}</a>: ${receipt} ${provenanceLabel(e.provenance_class ?? null).value}, ${judged.has(e.seq) ? "agent's receipt: " : 'outcome '}${text(e.outcome)}${e.receipt_status ? ` (${text(e.receipt_status)})` : ''}${judged.has(e.seq) ? `; owning system: <span class="o-${escapeHtml(judged.get(e.seq))}">${text(judged.get(e.seq) === 'confirmed' ? 'confirmed' : OUTCOME_WORDS[judged.get(e.seq) as keyof typeof OUTCOME_WORDS])}</span>` : ''}${e.receipt_provenance_class ? `, receipt says ${text(e.receipt_provenance_class)}` : ''}${e.superseded_by ? `, <b>corrected by</b> ${id(e.superseded_by)}` : ''}${e.receipt_recorded_by ? `, <b>receipt recorded by another owner</b> ${text(e.receipt_recorded_by.join(', '))}` : ''}</li>`;
    })
    .join('')}</ul>${more(items.length, PAGE_EVIDENCE_ITEMS)}`;
}

/** One outcome report in a list: system, effect, result, linked to its page; superseded or not counted said so. */
function outcomeLine(o: OutcomeItem): string {
  const why = o.note === 'superseded' ? `, superseded by ${id(o.superseded_by)}` : o.note === 'other_system' ? ', <b>another system: shown, never counted</b>' : o.note === 'other_effect' ? ', another effect: not counted' : o.note === 'latest' ? ', <b>latest: decides</b>' : '';
  return `<li><a href="/outcome/${encodeURIComponent(o.outcome_id)}">${id(o.outcome_id)}</a>: ${text(o.system)} reports <span class="${o.result !== 'confirmed' ? 'bad' : o.counted ? 'ok' : ''}">${text(o.result)}</span> for ${text(o.effect)}, observed ${text(o.observed_at)}${why}</li>`;
}

/** The outcome evidence section (issue 18): each action that requires an outcome, its status and the outcomes seen. */
function outcomesSection(r: StoredReport['report'], links: Links): string {
  if (!r.outcomes) return '';
  const c = r.outcomes.counts;
  const rows = r.actions
    .filter((a) => a.outcome)
    .map((a) => {
      const o = a.outcome!;
      const ev = o.evidence.length
        ? `<ul class="evidence">${o.evidence
            .slice(0, PAGE_EVIDENCE_ITEMS)
            .map((e) => `<li><a href="${escapeHtml(links.entry(e.seq))}">seq ${Number(e.seq)}</a>: <span class="o-${escapeHtml(e.status)}">${text(e.status)}</span>${e.late ? ' (late)' : ''}; agent's receipt: ${text(e.receipt_outcome)}${e.outcomes.length ? `<ul>${e.outcomes.map(outcomeLine).join('')}</ul>` : ''}</li>`)
            .join('')}</ul>${more(o.evidence.length, PAGE_EVIDENCE_ITEMS)}`
        : '&ndash;';
      return `<tr><td>${id(a.action_id)}</td><td class="o-${escapeHtml(o.status)}">${text(o.status)}</td><td>${text(o.required.effect)} from ${text(o.required.from_system)}${o.required.within_seconds !== null ? ` within ${text(o.required.within_seconds)} s` : ''}</td><td>${ev}</td><td>${text(o.detail)}</td></tr>`;
    })
    .join('\n');
  const info = r.outcomes.information.length
    ? `<h3>Outcomes for calls that required none (information, not counted)</h3><ul class="evidence">${r.outcomes.information
        .slice(0, PAGE_EVIDENCE_ITEMS)
        .map((i) => `<li><a href="${escapeHtml(links.entry(i.seq))}">seq ${Number(i.seq)}</a>${i.action_id ? ` (${id(i.action_id)})` : ' (unplanned or not accepted evidence)'}<ul>${i.outcomes.map(outcomeLine).join('')}</ul></li>`)
        .join('')}</ul>${more(r.outcomes.information.length, PAGE_EVIDENCE_ITEMS)}`
    : '';
  return `<h2 id="outcomes">Outcome evidence</h2>
<p>${text(r.outcomes.statement)}</p>
<p>Required outcomes: ${text(c.required)}; confirmed ${text(c.confirmed)}, contradicted ${text(c.contradicted)}, unconfirmed ${text(c.unconfirmed)}, wrong system ${text(c.wrong_system)}; ${text(c.outcomes_matched)} outcome report(s) matched by receipt id.</p>
${rows ? `<div class="scroll"><table id="outcome-actions"><thead><tr><th>Action</th><th>Outcome status</th><th>Required</th><th>Evidence and outcomes</th><th>Detail</th></tr></thead><tbody>\n${rows}</tbody></table></div>` : ''}
${info}`;
}

/**
 * One expected action's row. A covered action whose required outcome is not
 * confirmed is never shown as a plain green "covered" (issue 27): its status
 * cell says the outcome status in red, and that the call itself was recorded.
 */
function actionRow(a: ActionReport, links: Links, erasedSince: boolean): string {
  const over = outcomeOverride(a);
  const status = over
    ? `<td class="s-outcome" data-outcome="${escapeHtml(over)}">outcome ${text(OUTCOME_WORDS[over])}<br><small>the call is recorded (covered by its receipt); ${text(outcomeReason(a.outcome!) ?? '')}</small></td>`
    : coveredWithErasedEvidence(a)
      ? `<td class="s-erased">${text(COVERED_ERASED_STYLE.word)}<br><small>recorded and verified at ingestion; its content is gone, not re-checked</small></td>`
      : erasedSince && a.status === 'covered'
        ? `<td class="s-erased">covered as issued<br><small>evidence this report counted was erased after it was issued: not re-checkable now</small></td>`
      : `<td class="s-${escapeHtml(a.status)}">${text(a.status)}${a.conditions.length > 1 ? `<br><small>also: ${text(a.conditions.slice(1).join(', '))}</small>` : ''}</td>`;
  return `<tr id="action-${escapeHtml(encodeURIComponent(a.action_id))}"><td>${id(a.action_id)}</td><td>${id(a.tool)}</td>${status}
<td>${text(a.min_count)}&ndash;${a.max_count === null ? '&infin;' : text(a.max_count)}; ${a.must_succeed ? 'must succeed' : 'outcome not required'}; accepts ${text(a.accepted_provenance.join(', '))}${a.after.length ? `; after ${text(a.after.join(', '))}` : ''}</td>
<td>${evidenceList(a.evidence, links, a.outcome)}${a.over_count_evidence.length ? `<br><b>over count:</b>${evidenceList(a.over_count_evidence, links)}` : ''}${a.reported_only_evidence.length ? `<br><b>reported only:</b>${evidenceList(a.reported_only_evidence, links)}` : ''}</td><td>${text(a.detail)}</td></tr>`;
}

/** After the coverage ratio: how many covered actions have their required outcome not confirmed (they count as covered, and are findings). */
function outcomeNote(actions: ActionReport[]): string {
  const bad = actions.filter((a) => outcomeOverride(a) !== null);
  if (bad.length === 0) return '';
  return `; <span class="bad">${bad.length} of them with the required outcome not confirmed</span> (${bad.map((a) => `${id(a.action_id)}: ${text(OUTCOME_WORDS[outcomeOverride(a)!])}`).join(', ')})`;
}

/** Who recorded the subject, shown at the top: a plan's `recorded_by_owner` is only as good as this line. */
function recorderNote(w: RecordedBySection | undefined, kind: string): string {
  if (!w) return '';
  const planOwner = w.plan_owner === null ? 'The plan names no owner (recorded_by_owner): check that this is who should have recorded it.' : `The plan names recorded_by_owner <b>${text(w.plan_owner)}</b>: ${text(w.plan_owner_check.replace(/_/g, ' '))}.`;
  if (!w.checked) return `<p class="note"><b>Recorded by: not checked</b> (offline report: files carry no keys). ${planOwner}</p>`;
  const who = w.owners.length ? `owner${w.owners.length > 1 ? 's' : ''} <b>${w.owners.map((o) => text(o)).join(', ')}</b> (key${w.key_names.length > 1 ? 's' : ''} ${w.key_names.map((k) => `<code>${text(k)}</code>`).join(', ')})` : 'nobody';
  const unattributed = w.unattributed_events ? `; ${text(w.unattributed_events)} event(s) name no key` : '';
  const foreign = w.receipts_by_other_owner.length ? ` <span class="bad">${text(w.receipts_by_other_owner.length)} receipt(s) it names were recorded by another owner</span>.` : '';
  const bad = w.plan_owner_check === 'recorded_by_other_owner' || w.receipts_by_other_owner.length > 0;
  return `<p class="note"><b class="${bad ? 'bad' : ''}">Recorded by</b>: the ${text(kind)} was recorded by ${who}${unattributed}. ${planOwner}${foreign}</p>`;
}

/**
 * The page's headline: the coverage result first, then the integrity of
 * what it was reconciled against (chain verdict, endpoint commitment), each
 * in words and colour. Only full coverage over a valid record whose
 * truncation is excluded is all green.
 */
function headline(s: StoredReport): string {
  const r = s.report;
  const i = r.integrity;
  const c = i.commitment;
  const lines: { tone: Tone; text: string; id: string }[] = [];
  // The findings are named in words here (issue 27), not only counted: the first three, then "and N more".
  lines.push({ tone: r.result === 'full_coverage' && r.findings.length === 0 ? 'ok' : 'bad', text: coverageHeadline(r), id: 'verdict-line' });
  const record = i.kind === 'timeline' ? 'Timeline' : 'Workflow receipt';
  if (!i.recorded) lines.push({ tone: 'bad', text: `${record}: not recorded`, id: 'integrity-line' });
  else lines.push({ tone: i.verdict === 'valid' ? 'ok' : i.verdict === 'invalid' ? 'bad' : 'warn', text: `${record}: ${String(i.verdict).toUpperCase()}`, id: 'integrity-line' });
  if (c.state !== 'not_applicable') {
    lines.push(
      c.truncation === 'detected' || c.final_entry_substituted
        ? { tone: 'bad', text: `Endpoint commitment: ${c.final_entry_substituted && c.truncation !== 'detected' ? 'FINAL ENTRY SUBSTITUTED' : `TRUNCATION DETECTED${c.missing_entries !== null ? ` (${c.missing_entries} missing)` : ''}`}`, id: 'commitment-line' }
        : c.truncation === 'excluded'
          ? { tone: 'ok', text: 'Endpoint commitment: binding, truncation excluded', id: 'commitment-line' }
          : { tone: 'warn', text: `Endpoint commitment: truncation not excluded (${c.state === 'absent' ? absentWords(r) : 'none binding'})`, id: 'commitment-line' },
    );
  }
  if (!s.digest_verified) lines.push({ tone: 'bad', text: 'Report digest: recomputed, DOES NOT MATCH', id: 'digest-line' });
  const gone = s.evidence_erased_since;
  if (gone) {
    // Issue 29: what this report states can no longer be re-checked; it is shown as issued, never green.
    for (const l of lines) if (l.tone === 'ok') l.tone = 'warn';
    lines.unshift({ tone: 'warn', text: `Evidence this report counted was erased after it was issued (${gone.count} event${gone.count === 1 ? '' : 's'}, last on ${gone.erased_at.slice(0, 10)}): the report is shown as issued and can no longer be recomputed`, id: 'erased-line' });
  }
  return verdictBlock(lines).value;
}

/** The checkpoint line: tree size, leaf index and root of the signed checkpoint, or that there is none yet. */
export function checkpointRow(c: CheckpointRef | null | undefined): string {
  if (!usableCheckpoint(c)) return `<tr><th>Checkpoint</th><td id="checkpoint">${text(NO_CHECKPOINT)}</td></tr>`;
  const href = safeHttpUrl(c.url);
  return `<tr><th>Checkpoint</th><td id="checkpoint">proven against the signed checkpoint of tree size ${text(c.size)} (leaf index ${text(c.leaf_index)}), root ${id(c.root)}${href ? ` <a href="${escapeHtml(href)}">checkpoint</a>` : ` ${text(c.url)}`}</td></tr>`;
}

/** The picture of the report (src/core/coverage/picture.ts), inline SVG in a scrolling box, with its notes. */
function pictureSection(s: StoredReport): string {
  const p = layoutCoveragePicture(s.report, { evidence_erased_since: !!s.evidence_erased_since });
  return `<h2 id="picture">Picture</h2>
<p class="muted">Expected actions (rows, plan order) against the recorded timeline (columns, entry seq); shapes and words, not colours alone, tell the kinds apart. A large picture scrolls inside its box. <a href="/coverage/${encodeURIComponent(s.report_id)}.pdf">PDF</a></p>
<div class="picture" tabindex="0">${coverageSvg(p, 'cov')}</div>
${p.notes.map((t) => `<p class="muted">${text(t)}</p>`).join('')}`;
}

/** Render the report page in the site's layout; `checkpoint` is the signed checkpoint the report is proven against, when there is one. */
export function renderCoveragePage(s: StoredReport, checkpoint?: CheckpointRef | null): string {
  const r = s.report;
  const subjectId = 'job_id' in r.subject ? r.subject.job_id : r.subject.workflow_id;
  const subjectHref = 'job_id' in r.subject ? `/jobs/${encodeURIComponent(r.subject.job_id)}` : `/workflow/${encodeURIComponent(r.subject.workflow_id.toLowerCase())}`;
  const links: Links = 'job_id' in r.subject ? { entry: (seq) => `/jobs/${encodeURIComponent(subjectId)}?after=${Math.max(0, seq - 1)}#entry-${seq}` } : { entry: () => subjectHref };
  const subjectLink = `${'job_id' in r.subject ? 'job' : 'workflow'} <a id="subject" href="${escapeHtml(subjectHref)}">${id(subjectId)}</a>`;
  const i = r.integrity;
  const c = i.commitment;
  const planHref = r.plan.plan_id === null ? null : `/api/plans/${encodeURIComponent(r.plan.plan_id)}/versions/${encodeURIComponent(String(r.plan.version))}`;
  const body = `${STYLE}
<h1>Coverage report: ${subjectLink}</h1>
${headline(s)}
${recorderNote(r.integrity.recorded_by, i.kind)}
<p id="coverage-ratio">Coverage ${text(r.coverage.ratio)} expected actions covered (${text(r.coverage.percent)}%)${outcomeNote(r.actions)}, as of ledger position ${text(r.as_of_position)}.</p>
<div class="scroll"><table class="kv">
<tr><th>Report</th><td>${id(s.report_id)} <a href="/api/coverage-reports/${encodeURIComponent(s.report_id)}">JSON</a></td></tr>
<tr><th>Issued</th><td>${text(s.issued_at)}${s.issued_by ? ` by key <code>${text(s.issued_by.name)}</code>` : ''}</td></tr>
<tr><th>Digest</th><td>${id(s.digest)} <span class="badge ${s.digest_verified ? 'ok' : 'bad'}">${s.digest_verified ? 'recomputed: matches' : 'recomputed: DOES NOT MATCH'}</span><br><span class="muted">SHA-256 over the canonical JSON of the report content, see docs/coverage.md</span></td></tr>
${checkpointRow(checkpoint)}
</table></div>
${pictureSection(s)}

<h2>Plan</h2>
<div class="scroll"><table class="kv">
<tr><th>Title</th><td>${text(r.plan.title)}</td></tr>
<tr><th>Plan version</th><td>${planHref === null ? `plan version ${text(r.plan.version)} (given offline)` : `<a id="plan-version" href="${escapeHtml(planHref)}">plan ${id(r.plan.plan_id)} version ${text(r.plan.version)}</a> <span class="muted">(JSON; plans are read with a compliance, auditor or admin key)</span>`}</td></tr>
<tr><th>Registered</th><td>${text(r.plan.registered_at)} at ledger position ${text(r.plan.registered_position)}</td></tr>
<tr><th>Plan digest</th><td>${id(r.plan.digest)}</td></tr>
<tr><th>Unplanned actions</th><td>${text(r.plan.unplanned)}${r.plan.superseded_versions.length ? `; supersedes version(s) ${text(r.plan.superseded_versions.join(', '))}` : ''}</td></tr>
</table></div>
${r.plan.registered_after_execution_began ? `<p class="note"><b>Registered after execution began</b>: this plan version was recorded at position ${text(r.plan.registered_position)}, after the first recorded event of the job at position ${text(r.plan.execution_first_position)}. It could have been written to fit what was recorded.</p>` : ''}

<h2>Integrity</h2>
${s.evidence_erased_since ? '<p class="note" id="integrity-as-issued"><b>As issued</b>: evidence this report counted was erased since; the verdicts and commitments below are those it recorded and can no longer be re-checked.</p>' : ''}
<div class="scroll"><table class="kv"><tr><th>${i.kind === 'timeline' ? 'Timeline' : 'Workflow receipt'}</th><td>${i.recorded ? `<a href="${escapeHtml(subjectHref)}">verdict <b>${text(i.verdict)}</b></a>${i.reasons.length ? ` (${text(i.reasons.join(', '))})` : ''}; ${text(i.entry_count)} ${i.kind === 'timeline' ? 'entries' : 'steps'}${i.final_entry_digest ? `; final entry digest ${id(i.final_entry_digest)}` : ''}` : 'not recorded'}</td></tr>
<tr><th>Endpoint commitment</th><td><b>${text(c.state.replace('_', '-'))}</b>; truncation ${text(c.truncation.replace('_', ' '))}${c.attestation ? `; the binding commitment is <b>${text(c.attestation === 'ledger_issued' ? 'ledger-issued' : c.attestation === 'attested_by' ? 'attested' : 'only self-asserted')}</b>` : ''}. ${text(c.statement)}</td></tr>
${(i.commitments ?? []).map((x) => `<tr><th>Commitment ${'job_id' in r.subject && !x.commitment.startsWith('#') ? `<a href="${escapeHtml(`${subjectHref}#commitment-${x.commitment}`)}">${id(x.commitment)}</a>` : id(x.commitment)}${x.recorded_position === null ? '' : ` (position ${text(x.recorded_position)})`}</th><td><span class="badge ${x.contradicts ? 'bad' : !s.evidence_erased_since && x.binding && x.attestation !== 'self_asserted' ? 'ok' : 'warn'}">${text(x.outcome)}</span> ${attestationBadge(x, !!s.evidence_erased_since)} ${text(x.detail)}</td></tr>`).join('\n')}</table></div>

<h2>Expected actions</h2>
<div class="scroll"><table><thead><tr><th>Action</th><th>Tool</th><th>Status</th><th>Expectation</th><th>Evidence (entry, receipt)</th><th>Detail</th></tr></thead><tbody>
${r.actions.map((a) => actionRow(a, links, !!s.evidence_erased_since)).join('\n')}</tbody></table></div>
<p>Counts: ${text(Object.entries(r.counts).map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`).join(', '))}.</p>
${outcomesSection(r, links)}

<h2>Unplanned actions (${text(r.unplanned.policy === 'flag' ? 'flagged' : 'allowed')})</h2>
${r.unplanned.actions.length ? evidenceList(r.unplanned.actions, links) : '<p>None recorded.</p>'}
${r.close ? `<p>Closed by the ledger's closing marker, <a href="${escapeHtml(links.entry(Number(r.close.seq)))}">entry ${Number(r.close.seq)}</a> (${text(r.close.tool)}): the close, not an action.</p>` : ''}

<h2>Findings</h2>
${r.findings.length ? `<ul id="findings">${r.findings.slice(0, PAGE_FINDINGS).map((f) => `<li><code>${text(f.code)}</code>: ${text(f.message)}${f.seq !== undefined ? ` (<a href="${escapeHtml(links.entry(f.seq))}">entry ${text(f.seq)}</a>)` : ''}</li>`).join('')}</ul>${more(r.findings.length, PAGE_FINDINGS)}` : '<p>None.</p>'}

<h2>What this report does not prove</h2>
<ul>${r.does_not_prove.map((t) => `<li>${text(t)}</li>`).join('')}</ul>
`;
  return layout(`Coverage report ${s.report_id}`, unsafeRaw(body));
}

/**
 * Who stands behind a commitment of a report, as a badge (absent in reports
 * issued before issue 15): never green when self-asserted, nor when
 * `asIssued` (evidence the report counted was erased since).
 */
function attestationBadge(x: { attestation?: string; attested_by?: string[] }, asIssued = false): string {
  const ok = asIssued ? 'warn' : 'ok';
  if (x.attestation === 'ledger_issued') return `<span class="badge ${ok}">ledger-issued</span>`;
  if (x.attestation === 'attested_by') return `<span class="badge ${ok}">attested by ${text((x.attested_by ?? []).join(', '))}</span>`;
  if (x.attestation === 'self_asserted') return '<span class="badge warn">self-asserted</span>';
  return '';
}
