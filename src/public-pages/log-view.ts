import type { LogLocation } from '../log/log-answers';
import { html, SafeHtml } from './html';
import { idCode, shortId, Tone, verdictBlock } from './layout';

/** The headline line for a record's place in the log: proven (green) only when the inclusion proof was checked. */
export function logLine(loc: LogLocation): { tone: Tone; text: SafeHtml } {
  switch (loc.status) {
    case 'proven':
      return { tone: 'ok', text: html`In the log: leaf ${loc.leaf_index}, proven in signed checkpoint ${loc.checkpoint?.size ?? ''} (inclusion proof checked)` };
    case 'pending':
      return { tone: 'na', text: html`In the log: leaf ${loc.leaf_index}, not yet in a signed checkpoint` };
    case 'unavailable':
      return { tone: 'warn', text: html`In the log: leaf ${loc.leaf_index}; this deployment signs no checkpoints, so nothing proves it to you` };
    default:
      return { tone: 'bad', text: html`In the log: leaf ${loc.leaf_index} is NOT proven by the newest checkpoint` };
  }
}

/**
 * "In the verifiable log" (issue 14): where the record's event sits (leaf
 * index), the checkpoint it is proven against, the inclusion proof, and how
 * to check it offline. Never says proven unless the proof was checked.
 */
export function logSection(loc: LogLocation): SafeHtml {
  const cp = loc.checkpoint;
  return html`<section class="box" id="log">
<h2>In the verifiable log</h2>
${verdictBlock([logLine(loc)], '', 'log-verdict')}
<table class="kv">
<tr><th>Leaf index</th><td>${loc.leaf_index} <span class="muted">(ledger position ${loc.position})</span></td></tr>
<tr><th>Leaf hash</th><td>${shortId(loc.leaf_hash)}</td></tr>
${cp
  ? html`<tr><th>Checkpoint</th><td>size ${cp.size}, origin ${idCode(cp.origin)}, signed ${idCode(cp.signed_at)} <a href="${cp.url}">note</a></td></tr>
<tr><th>Root</th><td>${shortId(cp.root)}</td></tr>`
  : ''}
${loc.timestamp ? html`<tr id="time-anchor"><th>Time anchor (S10)</th><td>checkpoint ${loc.timestamp.size} timestamped at ${idCode(loc.timestamp.gen_time)} by ${loc.timestamp.tsa_name} (RFC 3161, <a href="${loc.timestamp.url}">token</a>; verified by this ledger against the configured TSA chain)</td></tr>` : loc.timestamp === null ? html`<tr id="time-anchor"><th>Time anchor (S10)</th><td class="muted">not yet timestamped</td></tr>` : ''}
${loc.detail ? html`<tr><th>Detail</th><td>${loc.detail}</td></tr>` : ''}
<tr><th>Proof file</th><td><a href="${loc.proof_url}">download</a> <span class="muted">(check offline: <code>aer1 log verify-proof FILE --vkey VKEY</code>; the vkey is at <a href="/.well-known/aer1">/.well-known/aer1</a>)</span></td></tr>
</table>
${loc.inclusion_proof ? html`<details id="inclusion-proof"><summary>Inclusion proof (${loc.inclusion_proof.length} ${loc.inclusion_proof.length === 1 ? 'hash' : 'hashes'}, JSON)</summary><pre>${JSON.stringify({ leaf_index: loc.leaf_index, tree_size: cp?.size, leaf_hash: loc.leaf_hash, proof: loc.inclusion_proof }, null, 2)}</pre></details>` : ''}
</section>`;
}
