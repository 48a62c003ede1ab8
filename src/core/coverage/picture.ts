/**
 * The coverage picture (docs/coverage.md, "The picture"): a report's
 * expected actions (rows, plan order, plus one row of unplanned actions)
 * against the recorded timeline (columns, entry seq). Pure: a report in, a
 * layout of boxes, marks and links out ({@link layoutCoveragePicture}); the
 * same layout is written as SVG by picture-svg.ts (`coverageSvg`) and drawn with
 * PDF primitives by src/coverage/coverage.pdf.ts, so page and PDF agree.
 *
 * Nothing is told by colour alone: each kind of evidence has its own shape
 * (legend), each row's status is written as a word beside a glyph, a
 * missing action's row is hatched, and an `after` constraint that does not
 * hold is a dashed connector marked "!".
 *
 * Bounded size: a plan has at most 500 expected actions, so every row is
 * drawn (fixed row height, the page scrolls; a PDF splits the rows over
 * pages). The seq axis has at most {@link MAX_COLUMNS} columns: a longer
 * timeline is binned (each column covers `seq_per_column` consecutive seqs,
 * its mark the most severe kind in the bin, its title the count). At most
 * {@link MAX_MARKS} marks are drawn; past that the picture says so (the
 * table and the JSON report hold every item).
 */
import { visibleText } from '../text';
import type { ActionReport, ActionStatus, CoverageReportContent, EvidenceItem } from './types';
import type { OutcomeStatus } from './outcomes';
import { outcomeOverride } from './headline';

/** Columns of the seq axis at most; longer timelines are binned. */
export const MAX_COLUMNS = 240;
/** Marks drawn at most (one per row and column). */
export const MAX_MARKS = 6000;
/** Plans up to this many actions get an arrow between the marks of every judged `after` constraint; larger ones only for the broken ones. */
export const ARROWS_ALL_UP_TO = 40;
/** Row labels longer than this are cut with an ellipsis (the full id is in the row's title). */
export const LABEL_CHARS = 22;

/** The kinds of marks, most severe first: a binned column shows the first present. */
export const MARK_KINDS = ['failure', 'outcome', 'unplanned', 'over_count', 'reported_only', 'unaccepted', 'erased', 'as_issued', 'unknown', 'success'] as const;
export type MarkKind = (typeof MARK_KINDS)[number];

/** The shape each mark kind is drawn with, its colour and its legend text. */
export const MARK_STYLE: Readonly<Record<MarkKind, { shape: 'circle' | 'ring' | 'cross' | 'square' | 'diamond' | 'dash' | 'triangle' | 'slashed' | 'hollow_square'; color: string; label: string }>> = {
  success: { shape: 'circle', color: '#1a7f37', label: 'accepted evidence, succeeded' },
  unknown: { shape: 'ring', color: '#1a7f37', label: 'accepted evidence, outcome unknown (no receipt)' },
  erased: { shape: 'hollow_square', color: '#9a6700', label: 'accepted, erased since (verified at ingestion)' },
  as_issued: { shape: 'circle', color: '#9a6700', label: 'accepted, as issued (not re-checkable now)' },
  failure: { shape: 'cross', color: '#cf222e', label: 'accepted evidence, failed' },
  outcome: { shape: 'slashed', color: '#cf222e', label: 'accepted evidence, owning system did not confirm' },
  over_count: { shape: 'square', color: '#9a6700', label: 'over count (beyond max_count)' },
  reported_only: { shape: 'diamond', color: '#9a6700', label: 'reported only (provenance not accepted)' },
  unaccepted: { shape: 'dash', color: '#57606a', label: 'not accepted, counted nowhere' },
  unplanned: { shape: 'triangle', color: '#cf222e', label: 'unplanned action (tool not in the plan)' },
};

/**
 * A covered action whose required outcome is not confirmed (issue 27): its
 * row says the outcome status instead of "covered", in red.
 */
export const OUTCOME_ROW_STYLE: Readonly<Record<Exclude<OutcomeStatus, 'confirmed'>, { glyph: string; word: string; color: string }>> = {
  contradicted: { glyph: '\u2717', word: 'CONTRADICTED', color: '#cf222e' },
  unconfirmed: { glyph: '\u2717', word: 'UNCONFIRMED', color: '#cf222e' },
  wrong_system: { glyph: '\u2717', word: 'WRONG SYSTEM', color: '#cf222e' },
};

/**
 * A covered action with erased evidence (issue 29): still counted as covered
 * (recorded and verified at ingestion), never drawn as a plain green
 * "covered": its content can no longer be re-checked.
 */
export const COVERED_ERASED_STYLE = { glyph: '\u2713', word: 'covered \u2014 evidence erased', color: '#9a6700', hatch: false } as const;

/** Whether a covered action counts evidence whose entry or receipt was erased since (issue 29). */
export function coveredWithErasedEvidence(a: ActionReport): boolean {
  return a.status === 'covered' && a.evidence.some((e) => e.evidence_erased !== undefined);
}

/** Each status's glyph and word (the row label); the colour only repeats it. */
export const STATUS_STYLE: Readonly<Record<ActionStatus, { glyph: string; word: string; color: string; hatch: boolean }>> = {
  covered: { glyph: '\u2713', word: 'covered', color: '#1a7f37', hatch: false },
  missing: { glyph: '\u2717', word: 'MISSING', color: '#cf222e', hatch: true },
  reported_only: { glyph: '\u25c7', word: 'REPORTED ONLY', color: '#9a6700', hatch: false },
  failed: { glyph: '\u2717', word: 'FAILED', color: '#cf222e', hatch: false },
  out_of_order: { glyph: '\u21c4', word: 'OUT OF ORDER', color: '#cf222e', hatch: false },
  over_count: { glyph: '+', word: 'OVER COUNT', color: '#9a6700', hatch: false },
};

export interface PictureRow {
  /** Row index (0 = first action; the last row is the unplanned row). */
  index: number;
  y: number;
  /** The label shown: a cut, visible form of the action id (or "unplanned"). */
  label: string;
  /** The full text for a title/tooltip: action id, tool, status and conditions. */
  title: string;
  status: ActionStatus | 'unplanned';
  /** The outcome status shown instead of `covered` (a required outcome not confirmed), or null. */
  outcome: Exclude<OutcomeStatus, 'confirmed'> | null;
  glyph: string;
  word: string;
  color: string;
  hatch: boolean;
}

export interface PictureMark {
  kind: MarkKind;
  row: number;
  column: number;
  /** Centre. */
  x: number;
  y: number;
  /** How many recorded items this mark stands for (> 1 only in a binned column), and the seqs they cover. */
  count: number;
  seq_from: number;
  seq_to: number;
}

/** An `after` constraint: `from` (the prerequisite) must complete before `to` starts. */
export interface PictureLink {
  from_row: number;
  to_row: number;
  /** null: not judged (the action has no accepted evidence). */
  ok: boolean | null;
  /** The gutter connector: x of its vertical run, and the two row centres. */
  x: number;
  y1: number;
  y2: number;
  /** When both ends have accepted evidence: the arrow from the prerequisite's completion mark to the action's first mark. */
  arrow: { x1: number; y1: number; x2: number; y2: number } | null;
  title: string;
}

export interface CoveragePicture {
  width: number;
  height: number;
  /** The plot area (rows × columns). */
  plot: { x: number; y: number; width: number; height: number };
  row_height: number;
  column_width: number;
  columns: number;
  /** Seqs per column (1 unless binned). */
  seq_per_column: number;
  /** The largest seq shown (the axis runs 1..max_seq); 0 when nothing is recorded. */
  max_seq: number;
  rows: PictureRow[];
  marks: PictureMark[];
  links: PictureLink[];
  ticks: { x: number; label: string }[];
  legend: { kind: MarkKind; label: string }[];
  /** Plain-text statements shown under the picture (binning, marks not drawn). */
  notes: string[];
  /** One line summing the picture up (also the SVG's accessible title). */
  summary: string;
}

const ROW_H = 18;
/** Width of the row labels (px): the status word is right-aligned at its edge. */
export const LABEL_W = 250;
const GUTTER_W = 44;
const TOP = 34;
const BOTTOM = 34;
const RIGHT = 16;
const PLOT_W_TARGET = 900;
/** Wide enough for the two legend columns. */
const MIN_WIDTH = 620;

/** A label as shown: invisible and bidi control characters written out (src/core/text.ts), cut to `max` code points. */
export function pictureText(s: string, max = LABEL_CHARS): string {
  const v = [...visibleText(s)];
  return v.length > max ? `${v.slice(0, max - 1).join('')}\u2026` : v.join('');
}

/** Seq and outcome kind of one evidence item in a list; `outcomeBad`: the owning system did not confirm this call's required outcome. */
function kindOf(e: EvidenceItem, list: 'evidence' | 'over' | 'reported' | 'unaccepted' | 'unplanned', outcomeBad = false): MarkKind {
  if (list === 'over') return 'over_count';
  if (list === 'reported') return 'reported_only';
  if (list === 'unaccepted') return 'unaccepted';
  if (list === 'unplanned') return 'unplanned';
  if (e.outcome === 'failure') return 'failure';
  if (outcomeBad) return 'outcome';
  if (e.evidence_erased !== undefined) return 'erased';
  return e.outcome === 'unknown' ? 'unknown' : 'success';
}

function safeSeq(n: unknown): number | null {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : null;
}

/** The seq at which action `a` reached its min_count (its min_count-th accepted seq), or null. */
function completionSeq(a: ActionReport): number | null {
  const seqs = a.evidence.map((e) => safeSeq(e.seq)).filter((s): s is number => s !== null).sort((x, y) => x - y);
  return seqs.length >= a.min_count ? seqs[a.min_count - 1] : null;
}

function firstSeq(a: ActionReport): number | null {
  const seqs = a.evidence.map((e) => safeSeq(e.seq)).filter((s): s is number => s !== null);
  return seqs.length ? Math.min(...seqs) : null;
}

/** Narrower pictures (the PDF's page width): fewer columns, a narrower plot. */
export interface PictureOptions {
  /** Columns of the seq axis at most (8..{@link MAX_COLUMNS}; default {@link MAX_COLUMNS}). */
  max_columns?: number;
  /** Width the plot aims at, in px (default 900; each column is 4 to 22 px wide). */
  plot_width?: number;
  /**
   * Evidence the report counted was erased after it was issued (issue 29):
   * every covered row is drawn as covered with erased evidence, and its
   * accepted marks as `as_issued` (amber, never green), since it can no
   * longer be re-checked.
   */
  evidence_erased_since?: boolean;
}

/**
 * Lay out the picture of a report. Deterministic; every text in the result
 * is plain (not escaped): {@link coverageSvg} escapes it for XML, the PDF
 * writer draws it as text.
 */
export function layoutCoveragePicture(r: CoverageReportContent, opts: PictureOptions = {}): CoveragePicture {
  const maxColumns = Math.max(8, Math.min(MAX_COLUMNS, opts.max_columns ?? MAX_COLUMNS));
  const plotTarget = Math.max(120, opts.plot_width ?? PLOT_W_TARGET);
  const actions = r.actions;
  const unplannedItems = r.unplanned.actions;
  const allSeqs: number[] = [];
  const lists: { row: number; kind: MarkKind; seq: number }[] = [];
  actions.forEach((a, row) => {
    const notConfirmed = new Set((a.outcome?.evidence ?? []).filter((x) => x.status !== 'confirmed').map((x) => x.seq));
    const add = (items: EvidenceItem[], list: Parameters<typeof kindOf>[1]): void => {
      for (const e of items) {
        const seq = safeSeq(e.seq);
        if (seq === null) continue;
        const kind = kindOf(e, list, list === 'evidence' && notConfirmed.has(e.seq));
        // Issue 29: a report whose evidence was erased since it was issued is shown as issued, never green.
        lists.push({ row, kind: opts.evidence_erased_since === true && (kind === 'success' || kind === 'unknown') ? 'as_issued' : kind, seq });
        allSeqs.push(seq);
      }
    };
    add(a.evidence, 'evidence');
    add(a.over_count_evidence, 'over');
    add(a.reported_only_evidence, 'reported');
    add(a.unaccepted_unassigned, 'unaccepted');
  });
  const unplannedRow = actions.length;
  for (const e of unplannedItems) {
    const seq = safeSeq(e.seq);
    if (seq === null) continue;
    lists.push({ row: unplannedRow, kind: 'unplanned', seq });
    allSeqs.push(seq);
  }
  const maxSeq = Math.max(0, safeSeq(r.integrity.entry_count) ?? 0, allSeqs.reduce((m, s) => (s > m ? s : m), 0));
  const seqPerColumn = Math.max(1, Math.ceil(maxSeq / maxColumns));
  const columns = Math.max(1, Math.ceil(maxSeq / seqPerColumn));
  const columnWidth = Math.max(4, Math.min(22, plotTarget / columns));
  const plotX = LABEL_W + GUTTER_W;
  const plotW = columns * columnWidth;
  const rowCount = actions.length + 1;
  const plotH = rowCount * ROW_H;
  const width = Math.max(MIN_WIDTH, Math.ceil(plotX + plotW + RIGHT));
  const legendRows = Math.ceil(MARK_KINDS.length / 2);
  const height = Math.ceil(TOP + plotH + BOTTOM + (legendRows + 1) * 16 + 8);
  const rowY = (row: number): number => TOP + row * ROW_H + ROW_H / 2;
  const colX = (col: number): number => plotX + col * columnWidth + columnWidth / 2;
  const columnOf = (seq: number): number => Math.floor((seq - 1) / seqPerColumn);

  const rows: PictureRow[] = actions.map((a, index) => {
    const over = outcomeOverride(a);
    const s = over ? { ...OUTCOME_ROW_STYLE[over], hatch: false } : coveredWithErasedEvidence(a) || (opts.evidence_erased_since === true && a.status === 'covered') ? COVERED_ERASED_STYLE : STATUS_STYLE[a.status];
    return {
      index,
      y: rowY(index),
      label: pictureText(a.action_id),
      title: visibleText(`${a.action_id} (tool ${a.tool}): ${a.conditions.join(', ')}${over ? `, but the required outcome is ${over.replace('_', ' ')}` : ''}${a.after.length ? `; after ${a.after.join(', ')}` : ''}`),
      status: a.status,
      outcome: over,
      glyph: s.glyph,
      word: s.word,
      color: s.color,
      hatch: s.hatch,
    };
  });
  const flagged = r.unplanned.policy === 'flag' && unplannedItems.length > 0;
  rows.push({
    index: unplannedRow,
    y: rowY(unplannedRow),
    label: 'unplanned actions',
    title: `${unplannedItems.length} recorded action(s) of tools not in the plan (${r.unplanned.policy === 'flag' ? 'flagged: findings' : 'allowed'})`,
    status: 'unplanned',
    outcome: null,
    glyph: unplannedItems.length ? '\u25b2' : '\u2013',
    word: unplannedItems.length ? `${unplannedItems.length}${flagged ? ' FLAGGED' : ' allowed'}` : 'none',
    color: flagged ? '#cf222e' : '#57606a',
    hatch: false,
  });

  // One mark per (row, column): the most severe kind there.
  const cells = new Map<string, PictureMark>();
  const severity = (k: MarkKind): number => MARK_KINDS.indexOf(k);
  for (const l of lists) {
    const column = columnOf(l.seq);
    const key = `${l.row}:${column}`;
    const m = cells.get(key);
    if (!m) cells.set(key, { kind: l.kind, row: l.row, column, x: colX(column), y: rowY(l.row), count: 1, seq_from: l.seq, seq_to: l.seq });
    else {
      m.count++;
      m.seq_from = Math.min(m.seq_from, l.seq);
      m.seq_to = Math.max(m.seq_to, l.seq);
      if (severity(l.kind) < severity(m.kind)) m.kind = l.kind;
    }
  }
  const sorted = [...cells.values()].sort((a, b) => a.row - b.row || a.column - b.column);
  const notes: string[] = [];
  // Keep the most severe marks when there are too many to draw.
  let marks = sorted;
  if (sorted.length > MAX_MARKS) {
    marks = [...sorted].sort((a, b) => severity(a.kind) - severity(b.kind) || a.row - b.row || a.column - b.column).slice(0, MAX_MARKS);
    marks.sort((a, b) => a.row - b.row || a.column - b.column);
    notes.push(`${sorted.length - MAX_MARKS} of ${sorted.length} marks are not drawn (the most severe are kept); the table and the JSON report list every item.`);
  }
  if (seqPerColumn > 1) notes.push(`The timeline has ${maxSeq} entries: each column covers ${seqPerColumn} consecutive seqs and shows the most severe mark among them.`);

  // `after` constraints: a connector in the gutter for each, an arrow between marks when both have accepted evidence.
  const byId = new Map(actions.map((a, i) => [a.action_id, i] as const));
  const links: PictureLink[] = [];
  const lanes = 6;
  actions.forEach((a, to) => {
    for (const after of a.after) {
      // `order` judges a constraint only when the action has accepted evidence; otherwise it is drawn as not judged.
      const o = (a.order ?? []).find((x) => x.after === after) ?? { after, ok: null, detail: 'not judged: the action has no accepted evidence' };
      const from = byId.get(o.after);
      if (from === undefined) continue;
      const done = completionSeq(actions[from]);
      const start = firstSeq(a);
      const lane = links.length % lanes;
      links.push({
        from_row: from,
        to_row: to,
        ok: o.ok,
        x: LABEL_W + 6 + lane * ((GUTTER_W - 12) / (lanes - 1)),
        y1: rowY(from),
        y2: rowY(to),
        // Mark-to-mark arrows only where they can be told apart: every one in a small plan, the broken ones in a large one.
        arrow: done !== null && start !== null && (actions.length <= ARROWS_ALL_UP_TO || o.ok === false) ? { x1: colX(columnOf(done)), y1: rowY(from), x2: colX(columnOf(start)), y2: rowY(to) } : null,
        title: visibleText(`${a.action_id} after ${o.after}: ${o.ok === null ? 'not judged' : o.ok ? 'holds' : 'DOES NOT HOLD'}. ${o.detail}`),
      });
    }
  });

  const step = Math.max(1, Math.ceil(columns / Math.max(1, Math.floor(plotW / 60))));
  const ticks: CoveragePicture['ticks'] = [];
  if (maxSeq > 0) for (let c = 0; c < columns; c += step) ticks.push({ x: colX(c), label: String(c * seqPerColumn + 1) });

  const c = r.counts;
  const outcomeRows = rows.filter((x) => x.outcome !== null).length;
  const summary = `Coverage ${r.coverage.ratio}: ${c.covered} covered${outcomeRows ? ` (${outcomeRows} of them with the required outcome not confirmed)` : ''}, ${c.missing} missing, ${c.reported_only} reported only, ${c.failed} failed, ${c.out_of_order} out of order, ${c.over_count} over count; ${c.unplanned_actions} unplanned; ${maxSeq} recorded entries.`;
  return {
    width,
    height,
    plot: { x: plotX, y: TOP, width: plotW, height: plotH },
    row_height: ROW_H,
    column_width: columnWidth,
    columns,
    seq_per_column: seqPerColumn,
    max_seq: maxSeq,
    rows,
    marks,
    links,
    ticks,
    legend: MARK_KINDS.map((kind) => ({ kind, label: MARK_STYLE[kind].label })),
    notes,
    summary,
  };
}
