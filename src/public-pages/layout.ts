import { provenanceKind } from '../core/aer1';
import { html, plainText, SafeHtml, unsafeRaw } from './html';

/** One small stylesheet for every page: readable, no external resources, prints well. */
const STYLE = unsafeRaw(`
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--accent:#0550ae}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
header.site{border-bottom:1px solid var(--line);background:var(--soft)}
header.site .wrap{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;align-items:baseline;padding:.75rem 1rem}
header.site a.brand{font-weight:700;color:var(--fg);text-decoration:none}
header.site nav a{margin-right:1rem}
.wrap{max-width:72rem;margin:0 auto;padding:0 1rem}
main.wrap{padding-top:1rem;padding-bottom:3rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:2rem 0 .5rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
a{color:var(--accent)}
bdi{unicode-bidi:isolate}
.cp{font:600 .75em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--bad);background:#ffebe9;border:1px dashed var(--bad);border-radius:3px;padding:0 .15em;margin:0 .05em;white-space:nowrap}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875rem}
.id{white-space:nowrap;overflow-x:auto;display:inline-block;max-width:100%;vertical-align:bottom;user-select:all;-webkit-user-select:all}
details.h{display:inline-block;max-width:100%;vertical-align:top}
details.h>summary{cursor:pointer;white-space:nowrap;list-style-position:inside}
details.h[open]>summary{margin-bottom:.25rem}
details.h>code.id{display:block}
.scroll{overflow-x:auto;max-width:100%}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.75rem;overflow:auto;white-space:pre;max-width:100%}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid var(--line);padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
thead th{white-space:nowrap}
table.kv{table-layout:fixed}
table.kv th{width:14rem}
.verdict{border:3px solid var(--muted);border-left-width:12px;border-radius:8px;padding:.75rem 1rem;margin:.5rem 0 1.25rem;background:var(--soft)}
.verdict .line{font-size:1.4rem;font-weight:700;line-height:1.3;margin:.15rem 0}
.verdict .line.sub{font-size:1.15rem}
.verdict p{margin:.4rem 0 0}
.verdict.ok{border-color:var(--ok);background:#dafbe1}.verdict.bad{border-color:var(--bad);background:#ffebe9}.verdict.warn{border-color:var(--warn);background:#fff8c5}.verdict.na{border-color:var(--muted)}
.verdict .line.ok,.verdict .line.bad,.verdict .line.warn,.verdict .line.na{background:none}
.verdict .line.bad a{color:inherit}
.prov{display:inline-block;font-weight:700;font-size:.8rem;letter-spacing:.02em;padding:.05rem .45rem;border-radius:4px;white-space:nowrap}
.prov-executed,.prov-observed{color:#fff;background:var(--accent);border:2px solid var(--accent)}
.prov-logged{color:var(--fg);background:repeating-linear-gradient(135deg,#fff,#fff 4px,#eaeef2 4px,#eaeef2 8px);border:2px dashed var(--muted);font-style:italic}
.prov-unknown{color:var(--bad);border:2px dotted var(--bad)}
.provenance.logged{border-left-style:dashed;border-left-color:var(--muted)}
ul.witness{margin:0;padding-left:1rem}
tr.failed-call>td{background:#fff5f5}
.badge.call-failed{display:block;width:fit-content;min-width:9rem;max-width:18rem;border-radius:4px;font-size:.75rem;margin-top:.15rem;white-space:normal;overflow-wrap:anywhere}
.badge.not-recorded{display:block;width:max-content;max-width:100%;border-radius:4px;font-size:.75rem;margin-top:.15rem}
details.passed{margin:.5rem 0}
details.passed>summary{cursor:pointer;color:var(--ok);font-weight:600}
.box{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:1rem 0;background:var(--soft)}
.provenance{border-left:6px solid var(--accent)}
.provenance .class{font-size:1.35rem;font-weight:700;letter-spacing:.02em}
.notice{border:2px solid var(--warn);background:#fff8c5;border-radius:8px;padding:.75rem 1rem;margin:1rem 0;font-weight:600}
.notice.bad{border-color:var(--bad);background:#ffebe9}
ul.outcomes{padding-left:1.2rem}ul.outcomes li{margin:.5rem 0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:1rem;font-size:.85rem;font-weight:600;border:1px solid currentColor}
.ok{color:var(--ok)}.bad{color:var(--bad)}.na{color:var(--muted)}.warn{color:var(--warn)}
.badge.ok::before{content:"\\2713\\00a0"}.badge.bad::before{content:"\\2717\\00a0"}.badge.warn::before{content:"!\\00a0"}
.muted{color:var(--muted)}
.nowrap{white-space:nowrap}
ul.limits li{margin:.25rem 0}
footer.site{border-top:1px solid var(--line);color:var(--muted);font-size:.85rem;padding:1rem 0}
@media (max-width:40rem){table.kv th{width:8.5rem;overflow-wrap:break-word}h1{font-size:1.25rem}.verdict .line{font-size:1.2rem}table.checks td.nowrap{white-space:normal;overflow-wrap:anywhere}table.checks td:last-child{min-width:11rem}}
@media print{header.site nav,footer.site{display:none}a{color:inherit;text-decoration:none}pre{white-space:pre-wrap}.box,.notice{break-inside:avoid}h2{break-after:avoid}}
`);

/** The shared page frame. */
export function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${unsafeRaw(plainText(title))} · AER-1 audit ledger</title>
<style>${STYLE}</style>
</head>
<body>
<header class="site"><div class="wrap"><a class="brand" href="/">AER-1 audit ledger</a><nav><a href="/">Home</a><a href="/docs">API docs</a></nav></div></header>
<main class="wrap">
${body}
</main>
<footer class="site"><div class="wrap">Public record: no account, wallet or token needed (draft-zambo-aer1-07, S9). Records are never altered; corrections are new receipts.</div></footer>
</body>
</html>
`.value;
}

/** ok / failed / not evaluated, as a coloured badge. */
export function okBadge(ok: boolean | null | undefined): SafeHtml {
  if (ok === true) return html`<span class="badge ok">ok</span>`;
  if (ok === false) return html`<span class="badge bad">failed</span>`;
  return html`<span class="badge na">not evaluated</span>`;
}

/** A verdict as a badge. */
export function verdictBadge(verdict: string): SafeHtml {
  const cls = verdict === 'valid' || verdict === 'verified' ? 'ok' : verdict === 'invalid' || verdict === 'failed' ? 'bad' : 'warn';
  return html`<span class="badge ${cls}">${verdict}</span>`;
}

/**
 * A checks table: name, outcome, detail. Checks that failed or were not
 * evaluated are listed first, in the open; the passed ones follow collapsed
 * in a `<details>` (no script), so a failure is never buried among them.
 */
export function checksTable(checks: { name: string; ok: boolean | null; detail?: string }[]): SafeHtml {
  const row = (c: { name: string; ok: boolean | null; detail?: string }) => html`<tr><td class="nowrap"><code>${c.name}</code></td><td>${okBadge(c.ok)}</td><td>${c.detail ?? ''}</td></tr>`;
  const table = (rows: typeof checks) => html`<div class="scroll"><table class="checks"><thead><tr><th>Check</th><th>Outcome</th><th>Detail</th></tr></thead><tbody>${rows.map(row)}</tbody></table></div>`;
  const open = checks.filter((c) => c.ok !== true);
  const passed = checks.filter((c) => c.ok === true);
  return html`${open.length ? table(open) : ''}${passed.length ? html`<details class="passed" id="passed-checks"><summary>${passed.length} check(s) passed (show)</summary>${table(passed)}</details>` : ''}`;
}

/**
 * A hash or identifier that never breaks mid-token: monospace, on one line,
 * selectable as a whole, scrolled when it is wider than its box.
 */
export function idCode(v: unknown): SafeHtml {
  return html`<code class="id">${typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v)}</code>`;
}

/**
 * A long hash or identifier for a narrow place (a table column): shortened
 * to its first 12 and last 6 characters, the full value one click away in
 * a `<details>` (no script), selectable as a whole. Values up to 40
 * characters (a UUID) are shown whole. Never put it inside a link (a
 * `<summary>` in an `<a>` would follow the link instead of opening).
 */
export function shortId(v: unknown): SafeHtml {
  const s = typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v);
  if ([...s].length <= 40) return idCode(s);
  const cps = [...s];
  return html`<details class="h"><summary><code title="show the full value">${cps.slice(0, 12).join('')}…${cps.slice(-6).join('')}</code></summary>${idCode(s)}</details>`;
}

/**
 * A provenance class as a label that looks different per kind (S5):
 * `EXECUTED BY …` and `OBSERVED VIA GATEWAY` solid, `LOGGED BY AGENT`
 * dashed, hatched and italic with "(self-reported)", an unknown class
 * dotted red. The words differ too, not only the colour.
 */
export function provenanceLabel(cls: unknown): SafeHtml {
  if (cls === null || cls === undefined || cls === '') return html`<span class="muted">unknown (receipt not at hand)</span>`;
  const kind = provenanceKind(cls);
  if (kind === 'logged') return html`<span class="prov prov-logged">${String(cls)}</span> <span class="muted">(self-reported)</span>`;
  if (kind === null) return html`<span class="prov prov-unknown">${String(cls)}</span> <span class="muted">(not a provenance class)</span>`;
  return html`<span class="prov prov-${kind}">${String(cls)}</span>`;
}

/** One line of a page's headline verdict: a symbol and words as well as a colour. */
export type Tone = 'ok' | 'bad' | 'warn' | 'na';
const SYMBOL: Record<Tone, string> = { ok: '✓', bad: '✗', warn: '⚠', na: '–' };

/**
 * The verdict block that leads a page: the worst tone colours the frame;
 * every line has its own symbol, words and colour. `id`: the section's id
 * (`verdict` for the page's own; another for a block inside a section, so a
 * page holds each id once), its lines' default ids `<id>-1`, `<id>-2`, ...
 */
export function verdictBlock(lines: { tone: Tone; text: SafeHtml | string; id?: string }[], more: SafeHtml | string = '', id = 'verdict'): SafeHtml {
  const rank: Tone[] = ['bad', 'warn', 'na', 'ok'];
  const worst = rank.find((t) => lines.some((l) => l.tone === t)) ?? 'na';
  return html`<section class="verdict ${worst}" id="${id}">${lines.map(
    (l, i) => html`<div class="${`line ${l.tone}${i > 0 ? ' sub' : ''}`}" id="${l.id ?? `${id}-${i + 1}`}"><span aria-hidden="true">${SYMBOL[l.tone]}</span> ${l.text}</div>`,
  )}${more}</section>`;
}

/** A bulleted "What this does not prove" list. */
export function limitsList(limits: string[]): SafeHtml {
  return html`<h2>What this does not prove</h2><ul class="limits">${limits.map((l) => html`<li>${l}</li>`)}</ul>`;
}
