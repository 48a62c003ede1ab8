/**
 * A coverage report as a PDF an auditor can attach to a file (pdfkit, no
 * hand-written PDF): subject, plan version and registration, integrity and
 * endpoint-commitment attestation, the picture (the same layout as the
 * page, src/core/coverage/picture.ts, drawn with PDF primitives), each
 * expected action's status with its evidence, unplanned actions, findings,
 * what the report does not prove, the report digest, the signed checkpoint
 * it is proven against (or that there is none yet) and the public URL.
 *
 * Used by `GET /coverage/{id}.pdf` and `aer1 coverage --pdf FILE`; no Nest
 * or database imports, so the CLI can use it.
 *
 * Text: the PDF's standard fonts (Helvetica, Courier) cover Latin-1 only,
 * so every value from a plan, timeline or receipt passes {@link pdfText}:
 * invisible and bidi control characters are written out as `<U+XXXX>` (as on
 * the pages) and any other character outside printable Latin-1 too, never
 * dropped or replaced silently.
 */
import PDFDocument from 'pdfkit';
import { visibleText } from '../core/text';
import { CheckpointRef, NO_CHECKPOINT, usableCheckpoint } from '../core/checkpoint-ref';
import { CoveragePicture, COVERED_ERASED_STYLE, coveredWithErasedEvidence, layoutCoveragePicture, MARK_STYLE, MarkKind } from '../core/coverage/picture';
import type { ActionReport, CoverageReportContent, EvidenceItem } from '../core/coverage/types';
import type { OutcomeItem } from '../core/coverage/outcomes';
import { absentWords, coverageHeadline, outcomeOverride, outcomeReason, OUTCOME_WORDS } from '../core/coverage/headline';

/** What the PDF is made of: the report content and what the ledger (or the CLI) knows about it. */
export interface CoveragePdfInput {
  report: CoverageReportContent;
  /** SHA-256 of the canonical JSON of `report`. */
  digest: string;
  /** true: recomputed now and equal; false: DOES NOT MATCH; null: not recomputed (the CLI computes it). */
  digest_verified: boolean | null;
  /** Null for a report made offline (`aer1 coverage`): it has no id, issue time or URL. */
  report_id: string | null;
  issued_at: string | null;
  url: string | null;
  position: number | null;
  /** The signed checkpoint the report is proven against; absent: "not yet proven against a signed checkpoint". */
  checkpoint?: CheckpointRef | null;
  /** Evidence the report counted that was erased after it was issued (issue 29); absent or null: none. */
  evidence_erased_since?: { count: number; erased_at: string } | null;
}

/** Evidence items listed per action in the PDF; the rest are counted (the JSON report has every one). */
export const PDF_EVIDENCE_ITEMS = 25;
/** Findings listed; the rest are counted. */
export const PDF_FINDINGS = 200;

/** Characters beyond Latin-1 that the standard fonts' WinAnsi encoding has (ellipsis, dashes, quotes, euro, ...). */
const WIN_ANSI_EXTRA = new Set([...'\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u017d\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u017e\u0178']);

/** Text for the PDF's standard fonts: visible form of invisibles (src/core/text.ts), other characters outside printable Latin-1 and WinAnsi as `<U+XXXX>`. */
export function pdfText(s: unknown, max = 2000): string {
  const str = typeof s === 'string' ? s : s === null || s === undefined ? '' : (JSON.stringify(s) ?? String(s));
  let out = '';
  for (const ch of visibleText(str)) {
    const cp = ch.codePointAt(0)!;
    out += (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) || cp === 0x0a || WIN_ANSI_EXTRA.has(ch) ? ch : `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
    if (out.length > max) return `${out.slice(0, max)}... (cut; the JSON report has the whole text)`;
  }
  return out;
}

const MARGIN = 48;
/** The picture fits an A4 page at a legible scale: at most 64 seq columns (longer timelines binned), a 256 px plot. */
const PDF_PICTURE = { max_columns: 64, plot_width: 256 };
const INK = '#24292f';
const MUTED = '#57606a';
const BAD = '#cf222e';
const OK = '#1a7f37';
const WARN = '#9a6700';

type Doc = PDFKit.PDFDocument;

/** Render the PDF; resolves with its bytes. */
export function renderCoveragePdf(input: CoveragePdfInput): Promise<Buffer> {
  const r = input.report;
  const subject = 'job_id' in r.subject ? `job ${r.subject.job_id}` : `workflow ${r.subject.workflow_id}`;
  const doc = new PDFDocument({
    size: 'A4',
    margins: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN },
    bufferPages: true,
    info: {
      Title: pdfText(`Coverage report: ${subject}`, 200),
      Subject: input.report_id ? `AER-1 coverage report ${input.report_id}` : 'AER-1 coverage report (offline)',
      Creator: 'AER-1 audit ledger',
      ...(input.issued_at && !Number.isNaN(Date.parse(input.issued_at)) ? { CreationDate: new Date(input.issued_at) } : {}),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const width = doc.page.width - 2 * MARGIN;

  const h1 = (t: string): void => void doc.font('Helvetica-Bold').fontSize(16).fillColor(INK).text(t, { width });
  /** A new page unless `need` points fit below the cursor (a heading is kept with what follows it). */
  const keep = (need: number): void => {
    if (doc.y + need > doc.page.height - MARGIN) doc.addPage();
  };
  /** A section heading, on a new page unless it and `need` points of what follows fit on this one (issue 27: no heading orphaned at a page bottom). */
  const h2 = (t: string, need = 48): void => {
    keep(need + 30);
    doc.moveDown(0.8).font('Helvetica-Bold').fontSize(12).fillColor(INK).text(t, { width });
    doc.moveDown(0.2);
  };
  const para = (t: string, color = INK, font = 'Helvetica'): void => void doc.font(font).fontSize(9.5).fillColor(color).text(t, { width });
  const kv = (k: string, v: string, color = INK): void => {
    doc.font('Helvetica-Bold').fontSize(9.5).fillColor(INK).text(`${k}: `, { continued: true, width });
    doc.font('Helvetica').fillColor(color).text(v, { width });
  };

  // Headline: result, integrity, commitment, digest.
  h1(pdfText(`Coverage report: ${subject}`, 300));
  doc.moveDown(0.3);
  const i = r.integrity;
  const c = i.commitment;
  const headline: [string, string][] = [];
  // The same words as the page's headline (src/core/coverage/headline.ts): the findings named, not only counted.
  headline.push([r.result === 'full_coverage' && r.findings.length === 0 ? OK : BAD, pdfText(coverageHeadline(r, { percent: true }), 1200)]);
  const record = i.kind === 'timeline' ? 'Timeline' : 'Workflow receipt';
  headline.push(!i.recorded ? [BAD, `${record}: NOT RECORDED`] : [i.verdict === 'valid' ? OK : i.verdict === 'invalid' ? BAD : WARN, `${record}: ${String(i.verdict).toUpperCase()}`]);
  if (c.state !== 'not_applicable') {
    headline.push(
      c.truncation === 'detected' || c.final_entry_substituted
        ? [BAD, `Endpoint commitment: ${c.final_entry_substituted && c.truncation !== 'detected' ? 'FINAL ENTRY SUBSTITUTED' : `TRUNCATION DETECTED${c.missing_entries !== null ? ` (${c.missing_entries} missing)` : ''}`}`]
        : c.truncation === 'excluded'
          ? [OK, 'Endpoint commitment: binding, truncation excluded']
          : [WARN, `Endpoint commitment: truncation NOT excluded (${c.state === 'absent' ? absentWords(r) : 'none binding'})`],
    );
  }
  if (input.digest_verified === false) headline.push([BAD, 'Report digest: recomputed, DOES NOT MATCH']);
  const gone = input.evidence_erased_since;
  if (gone) {
    // Issue 29, as on the page: what this report states can no longer be re-checked; shown as issued, never green.
    for (const l of headline) if (l[0] === OK) l[0] = WARN;
    headline.unshift([WARN, `Evidence this report counted was erased after it was issued (${gone.count} event${gone.count === 1 ? '' : 's'}, last on ${gone.erased_at.slice(0, 10)}): the report is shown as issued and can no longer be recomputed`]);
  }
  for (const [color, t] of headline) doc.font('Helvetica-Bold').fontSize(11).fillColor(color).text(t, { width });

  h2('Report');
  kv('Subject', pdfText(subject));
  if (input.report_id) kv('Report id', input.report_id);
  kv('Issued', input.issued_at ? `${input.issued_at}${input.position !== null ? ` (ledger position ${input.position})` : ''}` : 'offline (aer1 coverage): not recorded in a ledger');
  kv('As of ledger position', r.as_of_position === null ? 'none (offline)' : String(r.as_of_position));
  kv('Report digest', `${input.digest}${input.digest_verified === true ? ' (recomputed: matches)' : input.digest_verified === false ? ' (recomputed: DOES NOT MATCH)' : ''}`, input.digest_verified === false ? BAD : INK);
  para('SHA-256 over the canonical JSON of the report content (docs/coverage.md); recompute it with aer1 coverage --check-report.', MUTED);
  const cp = input.checkpoint;
  if (usableCheckpoint(cp)) kv('Checkpoint', `proven against the signed checkpoint of tree size ${cp.size}, leaf index ${cp.leaf_index}, root ${pdfText(cp.root, 200)} (${pdfText(cp.url, 500)})`);
  else kv('Checkpoint', NO_CHECKPOINT, WARN);
  kv('Public URL', input.url ? pdfText(input.url, 500) : 'none (offline report)');

  h2('Plan');
  kv('Title', pdfText(r.plan.title));
  kv('Plan', r.plan.plan_id === null ? `version ${r.plan.version ?? '(not given)'} (given offline)` : `${pdfText(r.plan.plan_id)} version ${r.plan.version}`);
  kv('Registered', r.plan.registered_at === null ? 'not known (offline)' : `${pdfText(r.plan.registered_at)}${r.plan.registered_position !== null ? ` at ledger position ${r.plan.registered_position}` : ''}`);
  kv('Plan digest', r.plan.digest);
  kv('Unplanned actions', `${r.plan.unplanned}${r.plan.superseded_versions.length ? `; supersedes version(s) ${r.plan.superseded_versions.join(', ')}` : ''}`);
  if (r.plan.registered_after_execution_began === true) para(`REGISTERED AFTER EXECUTION BEGAN: this plan version was recorded at position ${r.plan.registered_position}, after the first recorded event of the subject at position ${r.plan.execution_first_position}. It could have been written to fit what was recorded.`, BAD, 'Helvetica-Bold');
  else if (r.plan.registered_after_execution_began === null) para('Whether the plan was registered before execution began is not judged offline.', MUTED);

  h2('Integrity and commitment attestation');
  kv(record, i.recorded ? `verdict ${pdfText(i.verdict)}${i.reasons.length ? ` (${pdfText(i.reasons.join(', '))})` : ''}; ${i.entry_count} ${i.kind === 'timeline' ? 'entries' : 'steps'}${i.final_entry_digest ? `; final entry digest ${pdfText(i.final_entry_digest)}` : ''}` : 'not recorded', i.recorded && i.verdict === 'valid' ? INK : BAD);
  kv('Endpoint commitment', `${c.state.replace('_', '-')}; truncation ${c.truncation.replace('_', ' ')}. ${pdfText(c.statement)}`);
  for (const x of i.commitments ?? []) kv(`  Commitment ${pdfText(x.commitment, 80)}${x.recorded_position === null ? '' : ` (position ${x.recorded_position})`}`, `${x.outcome}: ${pdfText(x.detail)}`, x.contradicts ? BAD : x.binding ? INK : WARN);
  const w = i.recorded_by;
  if (w) {
    const planOwner = w.plan_owner === null ? 'the plan names no recorded_by_owner' : `the plan names recorded_by_owner ${pdfText(w.plan_owner)}: ${w.plan_owner_check.replace(/_/g, ' ')}`;
    kv('Recorded by', w.checked ? `${w.owners.length ? pdfText(w.owners.join(', ')) : 'nobody'} (keys ${pdfText(w.key_names.join(', ')) || '-'})${w.unattributed_events ? `; ${w.unattributed_events} event(s) name no key` : ''}; ${planOwner}${w.receipts_by_other_owner.length ? `; ${w.receipts_by_other_owner.length} receipt(s) recorded by another owner` : ''}` : `not checked (offline: files carry no keys); ${planOwner}`);
  }

  const picture = layoutCoveragePicture(r, { ...PDF_PICTURE, evidence_erased_since: !!input.evidence_erased_since });
  // Kept with the explanation and the first rows of the picture (drawPictureChunks starts a page for fewer than 4 rows).
  h2('Picture: expected actions against the recorded timeline', 40 + Math.min(1, width / picture.width) * (picture.plot.y + 16 + 4 * picture.row_height) + 24);
  para('Rows: expected actions in plan order, then unplanned actions. Columns: entry seq. Shapes and words, not colours alone, tell the kinds apart (legend below the picture).', MUTED);
  doc.moveDown(0.3);
  drawPictureChunks(doc, picture, width);

  h2('Expected actions');
  for (const a of r.actions) {
    keep(50);
    const bad = a.status !== 'covered';
    // A covered action whose required outcome is not confirmed is never a green COVERED (issue 27); nor one with erased evidence (issue 29).
    const over = outcomeOverride(a);
    const erased = !over && coveredWithErasedEvidence(a);
    const word = over ? `OUTCOME ${OUTCOME_WORDS[over]}` : erased ? COVERED_ERASED_STYLE.word.toUpperCase() : a.status.toUpperCase().replace(/_/g, ' ');
    doc.font('Helvetica-Bold').fontSize(10).fillColor(over ? BAD : erased ? WARN : bad ? (a.status === 'reported_only' || a.status === 'over_count' ? WARN : BAD) : OK).text(word, { continued: true, width });
    doc.fillColor(INK).text(`  ${pdfText(a.action_id, 200)} (tool ${pdfText(a.tool, 200)})${a.conditions.length > 1 ? `  also: ${a.conditions.slice(1).join(', ')}` : ''}`, { width });
    para(`expects ${a.min_count}-${a.max_count === null ? 'unbounded' : a.max_count}; ${a.must_succeed ? 'must succeed' : 'outcome not required'}; accepts ${pdfText(a.accepted_provenance.join(', '))}${a.after.length ? `; after ${pdfText(a.after.join(', '))}` : ''}`, MUTED);
    if (over) para(`The call is recorded (covered by its receipt), but the outcome required from ${pdfText(a.outcome!.required.from_system, 200)} is ${over.replace('_', ' ')}: ${pdfText(outcomeReason(a.outcome!), 400)}.`, BAD);
    evidence(doc, width, 'evidence', a.evidence, a.outcome);
    if (a.over_count_evidence.length) evidence(doc, width, 'over count', a.over_count_evidence);
    if (a.reported_only_evidence.length) evidence(doc, width, 'reported only', a.reported_only_evidence);
    para(pdfText(a.detail, 1000));
    doc.moveDown(0.3);
  }
  const counts = r.counts;
  para(`Counts: ${Object.entries(counts).map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`).join(', ')}.`, MUTED);

  outcomesSection(doc, width, r, { h2, keep, para });

  h2(`Unplanned actions (${r.unplanned.policy === 'flag' ? 'flagged' : 'allowed'})`);
  if (r.unplanned.actions.length === 0) para('None recorded.');
  else evidence(doc, width, 'unplanned', r.unplanned.actions);

  h2('Findings', 36);
  if (r.findings.length === 0) para('None.');
  for (const f of r.findings.slice(0, PDF_FINDINGS)) {
    doc.font('Courier-Bold').fontSize(9).fillColor(BAD).text(pdfText(f.code, 100), { continued: true, width });
    doc.font('Helvetica').fillColor(INK).text(`: ${pdfText(f.message, 1000)}`, { width });
  }
  if (r.findings.length > PDF_FINDINGS) para(`... and ${r.findings.length - PDF_FINDINGS} more (every one is in the JSON report).`, MUTED);

  h2('What this report does not prove');
  for (const t of r.does_not_prove) para(`- ${pdfText(t)}`);
  if (!usableCheckpoint(cp)) para(`- That this report is in the ledger's verifiable log: it is ${NO_CHECKPOINT}.`);

  // Footer on every page: subject, digest, page n of m.
  const range = doc.bufferedPageRange();
  for (let p = range.start; p < range.start + range.count; p++) {
    doc.switchToPage(p);
    const y = doc.page.height - MARGIN + 14;
    doc.font('Helvetica').fontSize(7).fillColor(MUTED).text(pdfText(`${subject} - report digest ${input.digest} - page ${p - range.start + 1} of ${range.count}`, 300), MARGIN, y, { width, lineBreak: false, height: 10 });
  }
  doc.end();
  return done;
}

/** One outcome report: who reports what for which effect, when, and whether it counts. */
function outcomeItemLine(o: OutcomeItem): string {
  const why = o.note === 'superseded' ? `, superseded by ${pdfText(o.superseded_by, 100)}` : o.note === 'other_system' ? ', another system: shown, never counted' : o.note === 'other_effect' ? ', another effect: not counted' : o.note === 'latest' ? ', latest: decides' : '';
  return `outcome ${pdfText(o.outcome_id, 100)}: ${pdfText(o.system, 200)} reports ${pdfText(o.result, 50)} for ${pdfText(o.effect, 200)}, observed ${pdfText(o.observed_at, 60)}${why}`;
}

/**
 * The outcome evidence section (issue 18, as on the page): the counts, then
 * each action that requires an outcome with its status in words and colour,
 * each call's outcome status and the outcomes seen; then the outcomes of
 * calls that required none (information). Absent when the report has none.
 */
function outcomesSection(
  doc: Doc,
  width: number,
  r: CoverageReportContent,
  f: { h2: (t: string, need?: number) => void; keep: (need: number) => void; para: (t: string, color?: string, font?: string) => void },
): void {
  if (!r.outcomes) return;
  const c = r.outcomes.counts;
  f.h2('Outcome evidence');
  f.para(`Required outcomes: ${c.required}; confirmed ${c.confirmed}, contradicted ${c.contradicted}, unconfirmed ${c.unconfirmed}, wrong system ${c.wrong_system}; ${c.outcomes_matched} outcome report(s) matched by receipt id.`);
  f.para(pdfText(r.outcomes.statement), MUTED);
  doc.moveDown(0.3);
  for (const a of r.actions) {
    const o = a.outcome;
    if (!o) continue;
    f.keep(50);
    const ok = o.status === 'confirmed';
    doc.font('Helvetica-Bold').fontSize(10).fillColor(ok ? OK : BAD).text(o.status === 'confirmed' ? 'CONFIRMED' : OUTCOME_WORDS[o.status], { continued: true, width });
    doc.fillColor(INK).text(`  ${pdfText(a.action_id, 200)}: requires ${pdfText(o.required.effect, 200)} from ${pdfText(o.required.from_system, 200)}${o.required.within_seconds !== null ? ` within ${o.required.within_seconds} s` : ''}`, { width });
    doc.font('Helvetica').fontSize(8.5);
    for (const e of o.evidence.slice(0, PDF_EVIDENCE_ITEMS)) {
      doc.fillColor(e.status === 'confirmed' ? INK : BAD).text(`    seq ${e.seq}: ${e.status === 'confirmed' ? 'CONFIRMED' : OUTCOME_WORDS[e.status]}${e.late ? ' (late)' : ''}; agent's receipt: ${e.receipt_outcome}`, { width });
      doc.fillColor(INK);
      for (const x of e.outcomes) doc.text(`        ${outcomeItemLine(x)}`, { width });
    }
    if (o.evidence.length > PDF_EVIDENCE_ITEMS) doc.fillColor(MUTED).text(`    ... and ${o.evidence.length - PDF_EVIDENCE_ITEMS} more (every one is in the JSON report)`, { width });
    if (o.evidence.length === 0) doc.fillColor(INK).text('    no accepted evidence', { width });
    f.para(pdfText(o.detail, 1000), ok ? INK : BAD);
    doc.moveDown(0.3);
  }
  const info = r.outcomes.information;
  if (info.length) {
    f.keep(50);
    doc.font('Helvetica-Bold').fontSize(10).fillColor(INK).text('Outcomes for calls that required none (information, not counted)', { width });
    doc.font('Helvetica').fontSize(8.5).fillColor(INK);
    for (const i of info.slice(0, PDF_EVIDENCE_ITEMS)) {
      doc.text(`    seq ${i.seq}${i.action_id ? ` (${pdfText(i.action_id, 200)})` : ' (unplanned or not accepted evidence)'}`, { width });
      for (const x of i.outcomes) doc.text(`        ${outcomeItemLine(x)}`, { width });
    }
    if (info.length > PDF_EVIDENCE_ITEMS) doc.fillColor(MUTED).text(`    ... and ${info.length - PDF_EVIDENCE_ITEMS} more (every one is in the JSON report)`, { width });
  }
}

/** Evidence lines; `outcome` (an action that requires one): each call's outcome status beside what the agent's receipt says. */
function evidence(doc: Doc, width: number, label: string, items: EvidenceItem[], outcome?: ActionReport['outcome']): void {
  const judged = new Map((outcome?.evidence ?? []).map((x) => [x.seq, x.status] as const));
  const owning = (seq: number): string => {
    const st = judged.get(seq);
    return st === undefined ? '' : `; owning system: ${st === 'confirmed' ? 'CONFIRMED' : OUTCOME_WORDS[st]}`;
  };
  const lines = items.slice(0, PDF_EVIDENCE_ITEMS).map(
    (e) =>
      `${label}: seq ${e.seq}, receipt ${e.receipt_id === null ? '(no id)' : pdfText(e.receipt_id, 100)}${e.receipt_recorded ? '' : ' (receipt not recorded)'}, ${pdfText(e.provenance_class ?? 'no provenance class', 200)}, tool ${pdfText(e.tool ?? '(none)', 200)}, ${judged.has(e.seq) ? "agent's receipt: " : 'outcome '}${e.outcome}${e.receipt_status ? ` (${pdfText(e.receipt_status, 100)})` : ''}${owning(e.seq)}${e.receipt_provenance_class ? `, receipt says ${pdfText(e.receipt_provenance_class, 200)}` : ''}${e.receipt_mismatch ? `, receipt disagrees on ${e.receipt_mismatch.join(', ')}` : ''}${e.superseded_by ? `, corrected by ${pdfText(e.superseded_by, 100)}` : ''}`,
  );
  if (lines.length === 0) lines.push(`${label}: none`);
  doc.font('Helvetica').fontSize(8.5).fillColor(INK);
  for (const l of lines) doc.text(`    ${l}`, { width });
  if (items.length > PDF_EVIDENCE_ITEMS) doc.fillColor(MUTED).text(`    ... and ${items.length - PDF_EVIDENCE_ITEMS} more (every one is in the JSON report)`, { width });
}

/** Draw one mark shape (the same shapes as the SVG, src/core/coverage/picture.ts). */
function mark(doc: Doc, kind: MarkKind, x: number, y: number, r: number): void {
  const { shape, color } = MARK_STYLE[kind];
  doc.save();
  switch (shape) {
    case 'circle':
      doc.circle(x, y, r).fill(color);
      break;
    case 'ring':
      doc.lineWidth(1.5).circle(x, y, r * 0.85).fillAndStroke('#ffffff', color);
      break;
    case 'cross':
      doc.lineWidth(2.2).moveTo(x - r, y - r).lineTo(x + r, y + r).moveTo(x + r, y - r).lineTo(x - r, y + r).stroke(color);
      break;
    case 'square':
      doc.rect(x - r, y - r, 2 * r, 2 * r).fill(color);
      break;
    case 'diamond':
      doc.lineWidth(1.5).polygon([x, y - r * 1.2], [x + r * 1.2, y], [x, y + r * 1.2], [x - r * 1.2, y]).fillAndStroke('#ffffff', color);
      break;
    case 'dash':
      doc.rect(x - r, y - 1, 2 * r, 2).fill(color);
      break;
    case 'slashed':
      doc.lineWidth(1.5).circle(x, y, r * 0.85).fillAndStroke('#ffffff', color);
      doc.lineWidth(1.8).moveTo(x - r * 0.85, y + r * 0.85).lineTo(x + r * 0.85, y - r * 0.85).stroke(color);
      break;
    case 'triangle':
      doc.polygon([x, y - r * 1.1], [x + r * 1.1, y + r * 0.9], [x - r * 1.1, y + r * 0.9]).fill(color);
      break;
    case 'hollow_square':
      doc.lineWidth(1.5).dash(2, { space: 1.4 }).rect(x - r * 0.85, y - r * 0.85, 1.7 * r, 1.7 * r).fillAndStroke('#ffffff', color);
      doc.undash();
      break;
  }
  doc.restore();
}

/**
 * The picture, scaled to the page width and split into chunks of rows, one
 * chunk per page (each with the seq axis); the legend after the last.
 */
function drawPictureChunks(doc: Doc, p: CoveragePicture, width: number): void {
  const scale = Math.min(1, width / p.width);
  const rowsTotal = p.rows.length;
  let from = 0;
  while (from < rowsTotal) {
    let avail = doc.page.height - MARGIN - doc.y - 24;
    let rows = Math.floor((avail / scale - p.plot.y - 16) / p.row_height);
    if (rows < 4 && from < rowsTotal) {
      doc.addPage();
      avail = doc.page.height - MARGIN - doc.y - 24;
      rows = Math.floor((avail / scale - p.plot.y - 16) / p.row_height);
    }
    const to = Math.min(rowsTotal, from + Math.max(1, rows));
    const top = doc.y;
    const drawn = drawRows(doc, p, MARGIN, top, scale, from, to);
    doc.x = MARGIN;
    doc.y = top + drawn;
    from = to;
  }
  // Legend.
  if (doc.y > doc.page.height - MARGIN - 110) doc.addPage();
  const y0 = doc.y + 6;
  p.legend.forEach((item, k) => {
    const x = MARGIN + (k % 2) * (width / 2);
    const y = y0 + Math.floor(k / 2) * 13;
    mark(doc, item.kind, x + 5, y + 4, 3.5);
    doc.font('Helvetica').fontSize(8).fillColor(INK).text(item.label, x + 14, y, { lineBreak: false });
  });
  let y = y0 + Math.ceil(p.legend.length / 2) * 13;
  const samples: [string, [number, number] | null, string][] = [
    ['#57606a', null, 'after: holds'],
    [BAD, [3, 2], 'after: DOES NOT HOLD (!)'],
    ['#8c959f', [1, 2], 'after: not judged (no evidence)'],
  ];
  samples.forEach(([color, dash, label], k) => {
    const x = MARGIN + k * (width / 3);
    doc.save().lineWidth(1.2);
    if (dash) doc.dash(dash[0], { space: dash[1] });
    doc.moveTo(x, y + 4).lineTo(x + 18, y + 4).stroke(color);
    doc.restore();
    doc.font('Helvetica').fontSize(8).fillColor(INK).text(label, x + 22, y, { lineBreak: false });
  });
  y += 14;
  doc.x = MARGIN;
  doc.y = y;
  for (const n of p.notes) doc.font('Helvetica').fontSize(8).fillColor(MUTED).text(n, MARGIN, doc.y, { width });
  doc.x = MARGIN;
}

/** Draw rows [from, to) of the picture at (x, y) scaled; returns the height used (page units). */
function drawRows(doc: Doc, p: CoveragePicture, x: number, y: number, scale: number, from: number, to: number): number {
  const rh = p.row_height;
  const { x: px, y: py, width: pw } = p.plot;
  const shift = from * rh;
  const bodyH = (to - from) * rh;
  doc.save();
  doc.translate(x, y).scale(scale);
  // Header: axis titles and ticks.
  doc.font('Helvetica-Bold').fontSize(9).fillColor(INK);
  doc.text(`recorded timeline: entry seq${p.seq_per_column > 1 ? ` (each column ${p.seq_per_column} seqs)` : ''}`, px, 4, { lineBreak: false });
  doc.text(from === 0 ? 'expected action (plan order)' : `expected actions, continued (rows ${from + 1}-${to})`, 4, 4, { lineBreak: false });
  doc.font('Helvetica').fontSize(8).fillColor(MUTED);
  for (const t of p.ticks) doc.text(t.label, t.x - 15, py - 11, { width: 30, align: 'center', lineBreak: false });
  // Body, clipped to this chunk's rows.
  doc.save();
  doc.rect(0, py, p.width, bodyH).clip();
  doc.translate(0, -shift);
  for (const r of p.rows.slice(from, to)) {
    const top = r.y - rh / 2;
    if (r.hatch) {
      doc.save().rect(0, top, px + pw, rh).clip();
      doc.rect(0, top, px + pw, rh).fill('#fff5f5');
      doc.lineWidth(1).strokeOpacity(0.45);
      for (let k = -rh; k < px + pw; k += 6) doc.moveTo(k, top + rh).lineTo(k + rh, top).stroke(BAD);
      doc.restore();
    } else if (r.index % 2 === 1) doc.rect(0, top, px + pw, rh).fill('#f6f8fa');
    if (r.status === 'unplanned') doc.save().lineWidth(0.8).dash(4, { space: 3 }).moveTo(0, top).lineTo(px + pw, top).stroke('#8c959f').restore();
    doc.font('Helvetica').fontSize(9).fillColor(INK).text(pdfText(r.label, 60), 4, r.y - 4.5, { lineBreak: false, width: 150, ellipsis: true, height: rh });
    // The status glyphs (check marks, crosses) are outside the standard fonts: the word carries the status.
    doc.font('Helvetica-Bold').fontSize(8.5).fillColor(r.color).text(r.word, 150, r.y - 4.5, { width: 92, align: 'right', lineBreak: false, height: rh });
  }
  for (const t of p.ticks) doc.save().lineWidth(0.5).moveTo(t.x, py + shift).lineTo(t.x, py + shift + bodyH).stroke('#eaeef2').restore();
  doc.lineWidth(0.8).rect(px, py + shift, pw, bodyH).stroke('#d0d7de');
  for (const l of p.links) {
    const lo = Math.min(l.from_row, l.to_row);
    const hi = Math.max(l.from_row, l.to_row);
    if (hi < from || lo >= to) continue;
    const bad = l.ok === false;
    const color = bad ? BAD : l.ok ? '#57606a' : '#8c959f';
    doc.save().lineWidth(1.1);
    if (bad) doc.dash(3, { space: 2 });
    else if (l.ok === null) doc.dash(1, { space: 2 });
    doc.moveTo(px, l.y1).lineTo(l.x, l.y1).lineTo(l.x, l.y2).lineTo(px - 4, l.y2).stroke(color);
    doc.undash().polygon([px - 1, l.y2], [px - 6, l.y2 - 3], [px - 6, l.y2 + 3]).fill(color);
    if (l.arrow) doc.lineWidth(0.8).moveTo(l.arrow.x1, l.arrow.y1).lineTo(l.arrow.x2, l.arrow.y2).stroke(color);
    if (bad) doc.font('Helvetica-Bold').fontSize(9).fillColor(BAD).text('!', l.x - 7, (l.y1 + l.y2) / 2 - 5, { lineBreak: false });
    doc.restore();
  }
  const rr = Math.max(2, Math.min(5, p.column_width / 2 - 0.5));
  for (const m of p.marks) if (m.row >= from && m.row < to) mark(doc, m.kind, m.x, m.y, rr);
  doc.restore();
  doc.restore();
  return (py + bodyH + 8) * scale;
}
