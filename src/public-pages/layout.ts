import { html, plainText, SafeHtml, unsafeRaw } from './html';

/** One small stylesheet for every page: readable, no external resources, prints well. */
const STYLE = unsafeRaw(`
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--accent:#0550ae}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
header.site{border-bottom:1px solid var(--line);background:var(--soft)}
header.site .wrap{display:flex;gap:1.5rem;align-items:baseline;padding:.75rem 1rem}
header.site a.brand{font-weight:700;color:var(--fg);text-decoration:none}
header.site nav a{margin-right:1rem}
.wrap{max-width:72rem;margin:0 auto;padding:0 1rem}
main.wrap{padding-top:1rem;padding-bottom:3rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem;word-break:break-all}
h2{font-size:1.15rem;margin:2rem 0 .5rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
a{color:var(--accent)}
bdi{unicode-bidi:isolate}
.cp{font:600 .75em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--bad);background:#ffebe9;border:1px dashed var(--bad);border-radius:3px;padding:0 .15em;margin:0 .05em;white-space:nowrap}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875rem}
.mono,td code{word-break:break-all}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.75rem;overflow:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid var(--line);padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;white-space:nowrap}
table.kv th{width:14rem}
.box{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:1rem 0;background:var(--soft)}
.provenance{border-left:6px solid var(--accent)}
.provenance .class{font-size:1.35rem;font-weight:700;letter-spacing:.02em}
.notice{border:2px solid var(--warn);background:#fff8c5;border-radius:8px;padding:.75rem 1rem;margin:1rem 0;font-weight:600}
.notice.bad{border-color:var(--bad);background:#ffebe9}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:1rem;font-size:.85rem;font-weight:600;border:1px solid currentColor}
.ok{color:var(--ok)}.bad{color:var(--bad)}.na{color:var(--muted)}.warn{color:var(--warn)}
.muted{color:var(--muted)}
.nowrap{white-space:nowrap}
ul.limits li{margin:.25rem 0}
footer.site{border-top:1px solid var(--line);color:var(--muted);font-size:.85rem;padding:1rem 0}
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

/** A checks table: name, outcome, detail. */
export function checksTable(checks: { name: string; ok: boolean | null; detail?: string }[]): SafeHtml {
  return html`<table><thead><tr><th>Check</th><th>Outcome</th><th>Detail</th></tr></thead><tbody>${checks.map(
    (c) => html`<tr><td class="nowrap"><code>${c.name}</code></td><td>${okBadge(c.ok)}</td><td>${c.detail ?? ''}</td></tr>`,
  )}</tbody></table>`;
}

/** A bulleted "What this does not prove" list. */
export function limitsList(limits: string[]): SafeHtml {
  return html`<h2>What this does not prove</h2><ul class="limits">${limits.map((l) => html`<li>${l}</li>`)}</ul>`;
}
