/**
 * The coverage picture's layout (picture.ts) written as SVG: the page's
 * picture. The PDF draws the same layout with its own primitives
 * (src/coverage/coverage.pdf.ts).
 */
import { CoveragePicture, LABEL_W, MARK_STYLE, MarkKind } from './picture';

/** Escape text for XML content and double-quoted attributes. */
export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

const n = (v: number): string => String(Math.round(v * 10) / 10);

/** SVG markup of one mark shape of radius `r` at (x, y). */
export function markSvg(kind: MarkKind, x: number, y: number, r: number, title?: string): string {
  const { shape, color } = MARK_STYLE[kind];
  const t = title ? `<title>${xmlEscape(title)}</title>` : '';
  switch (shape) {
    case 'circle':
      return `<circle cx="${n(x)}" cy="${n(y)}" r="${n(r)}" fill="${color}">${t}</circle>`;
    case 'ring':
      return `<circle cx="${n(x)}" cy="${n(y)}" r="${n(r * 0.85)}" fill="#fff" stroke="${color}" stroke-width="1.5">${t}</circle>`;
    case 'cross':
      return `<path d="M${n(x - r)} ${n(y - r)}L${n(x + r)} ${n(y + r)}M${n(x + r)} ${n(y - r)}L${n(x - r)} ${n(y + r)}" stroke="${color}" stroke-width="2.2" fill="none">${t}</path>`;
    case 'square':
      return `<rect x="${n(x - r)}" y="${n(y - r)}" width="${n(2 * r)}" height="${n(2 * r)}" fill="${color}">${t}</rect>`;
    case 'diamond':
      return `<path d="M${n(x)} ${n(y - r * 1.2)}L${n(x + r * 1.2)} ${n(y)}L${n(x)} ${n(y + r * 1.2)}L${n(x - r * 1.2)} ${n(y)}Z" fill="#fff" stroke="${color}" stroke-width="1.5">${t}</path>`;
    case 'dash':
      return `<rect x="${n(x - r)}" y="${n(y - 1)}" width="${n(2 * r)}" height="2" fill="${color}">${t}</rect>`;
    case 'slashed':
      return `<g>${t}<circle cx="${n(x)}" cy="${n(y)}" r="${n(r * 0.85)}" fill="#fff" stroke="${color}" stroke-width="1.5"/><path d="M${n(x - r * 0.85)} ${n(y + r * 0.85)}L${n(x + r * 0.85)} ${n(y - r * 0.85)}" stroke="${color}" stroke-width="1.8"/></g>`;
    case 'triangle':
      return `<path d="M${n(x)} ${n(y - r * 1.1)}L${n(x + r * 1.1)} ${n(y + r * 0.9)}L${n(x - r * 1.1)} ${n(y + r * 0.9)}Z" fill="${color}">${t}</path>`;
    case 'hollow_square':
      return `<rect x="${n(x - r * 0.85)}" y="${n(y - r * 0.85)}" width="${n(1.7 * r)}" height="${n(1.7 * r)}" fill="#fff" stroke="${color}" stroke-width="1.5" stroke-dasharray="2 1.4">${t}</rect>`;
  }
}

/**
 * The picture as a standalone SVG document (no scripts, no external
 * resources; every text escaped). `idPrefix` keeps pattern ids unique when
 * several pictures share a page.
 */
export function coverageSvg(p: CoveragePicture, idPrefix = 'cov'): string {
  const hatch = `${idPrefix}-hatch`;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${p.width}" height="${p.height}" viewBox="0 0 ${p.width} ${p.height}" role="img" aria-labelledby="${idPrefix}-title" font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" font-size="11">`,
    `<title id="${idPrefix}-title">${xmlEscape(p.summary)}</title>`,
    `<defs><pattern id="${hatch}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff5f5"/><line x1="0" y1="0" x2="0" y2="6" stroke="#cf222e" stroke-width="1.4" stroke-opacity=".45"/></pattern>`,
    `<marker id="${idPrefix}-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0 0L8 4L0 8Z" fill="#57606a"/></marker>`,
    `<marker id="${idPrefix}-arrow-bad" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0 0L8 4L0 8Z" fill="#cf222e"/></marker></defs>`,
    `<rect width="${p.width}" height="${p.height}" fill="#fff"/>`,
  );
  const { x: px, y: py, width: pw, height: ph } = p.plot;
  // Header: axis title.
  out.push(`<text x="${px}" y="14" font-weight="600" fill="#24292f">recorded timeline: entry seq &#8594;${p.seq_per_column > 1 ? ` (each column ${p.seq_per_column} seqs)` : ''}</text>`);
  out.push(`<text x="4" y="14" font-weight="600" fill="#24292f">expected action (plan order) &#8595;</text>`);
  // Rows: zebra background, hatched when missing, label with glyph + word.
  for (const r of p.rows) {
    const top = r.y - p.row_height / 2;
    if (r.hatch) out.push(`<rect x="0" y="${n(top)}" width="${n(px + pw)}" height="${p.row_height}" fill="url(#${hatch})"/>`);
    else if (r.index % 2 === 1) out.push(`<rect x="0" y="${n(top)}" width="${n(px + pw)}" height="${p.row_height}" fill="#f6f8fa"/>`);
    if (r.status === 'unplanned') out.push(`<line x1="0" y1="${n(top)}" x2="${n(px + pw)}" y2="${n(top)}" stroke="#8c959f" stroke-dasharray="4 3"/>`);
    out.push(
      `<g class="row" data-status="${xmlEscape(r.status)}"${r.outcome ? ` data-outcome="${xmlEscape(r.outcome)}"` : ''}><title>${xmlEscape(r.title)}</title><text x="4" y="${n(r.y + 4)}" fill="#24292f">${xmlEscape(r.label)}</text>` +
        `<text x="${LABEL_W - 4}" y="${n(r.y + 4)}" text-anchor="end" fill="${r.color}" font-weight="600">${xmlEscape(`${r.glyph} ${r.word}`)}</text></g>`,
    );
  }
  // Plot frame and column grid at the ticks.
  out.push(`<rect x="${n(px)}" y="${n(py)}" width="${n(pw)}" height="${n(ph)}" fill="none" stroke="#d0d7de"/>`);
  for (const t of p.ticks) {
    out.push(`<line x1="${n(t.x)}" y1="${n(py)}" x2="${n(t.x)}" y2="${n(py + ph)}" stroke="#eaeef2"/>`);
    out.push(`<text x="${n(t.x)}" y="${n(py - 4)}" text-anchor="middle" fill="#57606a" font-size="10">${xmlEscape(t.label)}</text>`);
    out.push(`<text x="${n(t.x)}" y="${n(py + ph + 12)}" text-anchor="middle" fill="#57606a" font-size="10">${xmlEscape(t.label)}</text>`);
  }
  // `after` constraints: gutter connectors (always) and arrows between marks (when both ends have evidence).
  for (const l of p.links) {
    const bad = l.ok === false;
    const color = bad ? '#cf222e' : l.ok ? '#57606a' : '#8c959f';
    const dash = bad ? ' stroke-dasharray="3 2"' : l.ok === null ? ' stroke-dasharray="1 2"' : '';
    const marker = bad ? `${idPrefix}-arrow-bad` : `${idPrefix}-arrow`;
    out.push(
      `<g class="after" data-ok="${String(l.ok)}"><title>${xmlEscape(l.title)}</title><path d="M${n(px)} ${n(l.y1)}H${n(l.x)}V${n(l.y2)}H${n(px - 1)}" fill="none" stroke="${color}" stroke-width="1.2"${dash} marker-end="url(#${marker})"/>` +
        (!bad ? '' : `<text x="${n(l.x - 3)}" y="${n((l.y1 + l.y2) / 2 + 4)}" text-anchor="end" fill="#cf222e" font-weight="700">!</text>`) +
        (l.arrow ? `<line x1="${n(l.arrow.x1)}" y1="${n(l.arrow.y1)}" x2="${n(l.arrow.x2)}" y2="${n(l.arrow.y2)}" stroke="${color}" stroke-width="1"${dash} stroke-opacity=".7" marker-end="url(#${marker})"/>` : '') +
        `</g>`,
    );
  }
  // Marks.
  const r = Math.max(2, Math.min(5, p.column_width / 2 - 0.5));
  for (const m of p.marks) {
    const seqs = m.seq_from === m.seq_to ? `seq ${m.seq_from}` : `seq ${m.seq_from}\u2013${m.seq_to}, ${m.count} items`;
    out.push(markSvg(m.kind, m.x, m.y, r, `${seqs}: ${MARK_STYLE[m.kind].label}`));
  }
  // Legend.
  const ly = py + ph + 26;
  p.legend.forEach((item, i) => {
    const lx = 8 + (i % 2) * 300;
    const y = ly + Math.floor(i / 2) * 16;
    out.push(markSvg(item.kind, lx + 5, y, 4.5), `<text x="${lx + 16}" y="${y + 4}" fill="#24292f">${xmlEscape(item.label)}</text>`);
  });
  // The three kinds of `after` connector.
  const cy = ly + Math.ceil(p.legend.length / 2) * 16;
  const samples: [string, string, string][] = [
    ['#57606a', '', 'after: holds'],
    ['#cf222e', ' stroke-dasharray="3 2"', 'after: DOES NOT HOLD (!)'],
    ['#8c959f', ' stroke-dasharray="1 2"', 'after: not judged (no evidence)'],
  ];
  samples.forEach(([color, dash, label], i) => {
    const lx = 8 + i * 200;
    out.push(`<line x1="${lx}" y1="${cy}" x2="${lx + 22}" y2="${cy}" stroke="${color}" stroke-width="1.4"${dash}/><text x="${lx + 28}" y="${cy + 4}" fill="#24292f">${xmlEscape(label)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
