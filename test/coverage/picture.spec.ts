import { layoutCoveragePicture, MARK_STYLE, MAX_COLUMNS, MAX_MARKS } from '../../src/core/coverage/picture';
import { coverageSvg } from '../../src/core/coverage/picture-svg';
import { fiveActionReport, manyActionReport } from './picture-fixtures';

describe('coverage picture: layout', () => {
  it('5 actions: one row per action plus the unplanned row, a status word on each, marks by kind at their seq', () => {
    const r = fiveActionReport();
    expect(r.actions.map((a) => a.status)).toEqual(['covered', 'out_of_order', 'reported_only', 'failed', 'missing']);
    const p = layoutCoveragePicture(r);
    expect(p.rows.map((x) => [x.label, x.word])).toEqual([
      ['fetch', 'covered'],
      ['screen', 'OUT OF ORDER'],
      ['score', 'REPORTED ONLY'],
      ['decide', 'FAILED'],
      ['notify<script>', 'MISSING'],
      ['unplanned actions', '1 FLAGGED'],
    ]);
    expect(p.rows.filter((x) => x.hatch).map((x) => x.label)).toEqual(['notify<script>']);
    expect(p.seq_per_column).toBe(1);
    expect(p.max_seq).toBe(6);
    const marks = p.marks.map((m) => `${m.row}:${m.kind}@${m.seq_from}`);
    expect(marks).toEqual(['0:success@2', '1:success@1', '2:reported_only@3', '3:failure@4', '3:failure@6', '5:unplanned@5']);
    // after: screen after fetch does not hold (fetch came at seq 2, screen at 1); its arrow runs from seq 2 back to seq 1.
    const screen = p.links.find((l) => l.to_row === 1)!;
    expect(screen.ok).toBe(false);
    expect(screen.arrow).not.toBeNull();
    expect(screen.arrow!.x1).toBeGreaterThan(screen.arrow!.x2);
    expect(p.links.map((l) => [l.from_row, l.to_row, l.ok])).toEqual([[0, 1, false], [1, 2, null], [2, 3, false], [3, 4, null]]);
  });

  it('evidence erased since the report was issued: covered rows amber, accepted marks as issued (never green), the rest unchanged', () => {
    const p = layoutCoveragePicture(fiveActionReport(), { evidence_erased_since: true });
    expect(p.rows[0].word).toBe('covered \u2014 evidence erased');
    expect(p.rows[0].color).toBe('#9a6700');
    expect(p.marks.map((m) => `${m.row}:${m.kind}@${m.seq_from}`)).toEqual(['0:as_issued@2', '1:as_issued@1', '2:reported_only@3', '3:failure@4', '3:failure@6', '5:unplanned@5']);
    expect(p.marks.filter((m) => MARK_STYLE[m.kind].color === '#1a7f37')).toEqual([]);
    expect(p.rows.filter((r) => r.color === '#1a7f37')).toEqual([]);
    const svg = coverageSvg(p);
    expect(svg).toContain('accepted, as issued (not re-checkable now)');
  });

  it('the SVG escapes every text and has no script', () => {
    const svg = coverageSvg(layoutCoveragePicture(fiveActionReport()));
    expect(svg).toContain('notify&lt;script&gt;');
    expect(svg).not.toMatch(/<script/i);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).toContain('&#10007; MISSING'.replace('&#10007;', '\u2717'));
    expect(svg).toContain('stroke-dasharray="3 2"'); // the broken after constraint
  });

  it('invisible and bidi characters in an action id are shown, and long ids cut', () => {
    const r = fiveActionReport();
    r.actions[0].action_id = 'a\u202Eevil-very-long-action-identifier-here';
    const p = layoutCoveragePicture(r);
    expect(p.rows[0].label).toMatch(/^a<U\+202E>evil/);
    expect([...p.rows[0].label].length).toBe(22);
    expect(p.rows[0].label.endsWith('\u2026')).toBe(true);
  });

  it('500 actions: every row drawn, bounded width, binned seq axis, bounded marks', () => {
    const r = manyActionReport(500);
    const counts = r.counts;
    expect(counts.expected_actions).toBe(500);
    expect(counts.missing).toBeGreaterThan(5);
    expect(counts.out_of_order).toBeGreaterThanOrEqual(2);
    const p = layoutCoveragePicture(r);
    expect(p.rows).toHaveLength(501);
    expect(p.columns).toBeLessThanOrEqual(MAX_COLUMNS);
    expect(p.seq_per_column).toBe(Math.ceil(p.max_seq / MAX_COLUMNS));
    expect(p.width).toBeLessThan(1400);
    expect(p.marks.length).toBeLessThanOrEqual(MAX_MARKS);
    expect(p.notes.join(' ')).toMatch(/each column covers 3 consecutive seqs/);
    const svg = coverageSvg(p);
    expect(svg.length).toBeLessThan(1_000_000);
  });

  it('too many marks: the most severe are kept and the picture says how many are not drawn', () => {
    const r = manyActionReport(500);
    // Spread one action's evidence over every column of many rows by faking seqs.
    for (const a of r.actions) a.unaccepted_unassigned = Array.from({ length: 40 }, (_, k) => ({ ...a.evidence[0] ?? r.unplanned.actions[0], seq: 1 + k * 13 }));
    const p = layoutCoveragePicture(r);
    expect(p.marks).toHaveLength(MAX_MARKS);
    expect(p.notes[0]).toMatch(/marks are not drawn/);
    expect(p.marks.some((m) => m.kind === 'failure')).toBe(true);
  });
});
