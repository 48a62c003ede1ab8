import type { ReceiptNostrAnchor } from '../log/receipt-anchors';
import { html, SafeHtml } from './html';
import { idCode, shortId } from './layout';

/**
 * "Anchored on Nostr (S10)" on a receipt page (issue 33): per anchor, the
 * draft's fields (event id, publisher key, relays that accepted it, published
 * status and time) and the envelope binding the receipt to the anchored
 * checkpoint. Says published only for relays that answered OK true; says
 * how to check the signature offline rather than calling it verified.
 * Nothing at all when Nostr anchoring is not configured (`anchors` undefined).
 */
export function anchorsSection(anchors: ReceiptNostrAnchor[] | undefined): SafeHtml | '' {
  if (anchors === undefined) return '';
  return html`<section class="box" id="anchors">
<h2>Anchored on Nostr (S10)</h2>
${anchors.length === 0
  ? html`<p class="muted" id="no-anchor">Not yet anchored: no Nostr event accepted by a relay covers this receipt's checkpoint yet. Anchoring never changes the receipt or its verdict.</p>`
  : anchors.map(
      (a) => html`<table class="kv nostr-anchor">
<tr><th>Relay event id</th><td>${shortId(a.relay_event_id)}</td></tr>
<tr><th>Publisher key</th><td>${shortId(a.publisher_key)}</td></tr>
<tr><th>Published</th><td>${a.published ? html`yes, first accepted at ${idCode(a.published_at)}` : 'no relay has accepted it yet'}</td></tr>
<tr><th>Relays</th><td>${a.relay_status.length ? a.relay_status.map((r) => html`<div class="relay">${idCode(r.url)}: ${r.ok ? 'accepted (OK true)' : html`not accepted (${r.message})`}</div>`) : html`<span class="muted">none answered yet</span>`}</td></tr>
<tr><th>Anchored checkpoint</th><td>size ${a.envelope.checkpoint.size}, root ${shortId(a.envelope.checkpoint.root)}</td></tr>
</table>
<details class="envelope"><summary>Envelope ${a.envelope.format}: receipt, output hash and evidence hash (leaf ${a.envelope.leaf_index}) bound to the checkpoint by its inclusion proof (${a.envelope.inclusion_proof.length} ${a.envelope.inclusion_proof.length === 1 ? 'hash' : 'hashes'}, JSON)</summary><pre>${JSON.stringify(a.envelope, null, 2)}</pre></details>`,
    )}
<p class="muted">Anchoring is additive: it does not change the receipt bytes or verdict. The event's content is the checkpoint note; check its signature and the inclusion proof offline with <code>aer1 log verify-proof FILE --vkey VKEY --nostr-pubkey HEX</code> (the proof file carries the event), or fetch it from any relay by its id.</p>
</section>`;
}
