/**
 * The events phase: for every `event/<position>` member, the leaf hash
 * computed from the leaf bytes (`leaf_hash`), the inclusion proof against
 * the checkpoint's root (`inclusion`), and the leaf is the canonical ledger
 * event at that position (`leaf_event`). A withheld leaf is listed, its
 * inclusion checked from the stated hash only.
 */
import { Checkpoint, isTlogError, leafHash, verifyInclusion } from '../tlog';
import { memberName } from './format';
import { b64 } from './checkpoint';
import { PackDeps, PackLeafEvent, Tally } from './result';
import { linkOf, PackLinks } from './streams';

type Obj = Record<string, unknown>;

/** The pack's events by position: the parsed leaf, or null when its bytes are withheld. */
export type PackEvents = Map<number, PackLeafEvent | null>;

/** One `event/<position>` member checked against the checkpoint `cp` (null: none signed by --vkey precedes it). */
export function eventMember(events: PackEvents, name: string, m: Obj, cp: Checkpoint | null, deps: PackDeps, t: Tally, links?: PackLinks): void {
  t.counts.events++;
  const position = m.position;
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1 || name !== memberName.event(position) || m.leaf_index !== position - 1) {
    t.fail(name, 'format', 'position and leaf_index do not match the member name');
    return;
  }
  const stated = b64(m.leaf_hash);
  const proof = Array.isArray(m.proof) ? m.proof.map(b64) : [null];
  if (m.leaf === null && isObj(m.erased)) {
    // A format 1/2 leaf whose data was erased (issue 29): only its stated hash is left; listed, never checked as content.
    const er = m.erased;
    const e = { erasure_id: String(er.erasure_id), position: Number(er.position), erased_at: String(er.erased_at), by: String(er.by), legal_basis: String(er.legal_basis), reason: String(er.reason) };
    t.counts.erased++;
    events.set(position, { position, stream_id: '', stream_position: 0, type: String(m.type), key_name: null, data: null, format: 1, payload_commitment: null, erased: e });
    t.notChecked.push(`${name}: content erased on ${e.erased_at} by ${e.by} (${e.legal_basis}): ${e.reason}; a format 1/2 leaf held the content, so only its stated leaf hash is checked for inclusion`);
  } else if (m.leaf === null) {
    t.counts.withheld++;
    events.set(position, null);
    t.notChecked.push(`${name}: leaf bytes withheld (${typeof m.withheld === 'string' ? m.withheld : 'no reason given'}); its inclusion is checked from the stated leaf hash only`);
  }
  const leaf = m.leaf === null ? null : b64(m.leaf);
  if (m.leaf !== null && leaf === null) {
    t.fail(name, 'leaf_hash', 'leaf is not base64');
    return;
  }
  const computed = leaf ? leafHash(leaf) : stated;
  if (leaf && (!stated || !stated.equals(computed as Buffer))) t.fail(name, 'leaf_hash', `SHA-256(0x00 || leaf) is ${(computed as Buffer).toString('base64')}, the member states ${String(m.leaf_hash)}`);
  else if (leaf) t.pass('leaf_hash');
  let included = false;
  if (cp === null) t.fail(name, 'inclusion', 'not checked: no checkpoint signed by --vkey precedes it');
  else if (!computed || proof.some((p) => p === null)) t.fail(name, 'inclusion', 'the proof or leaf hash is not base64');
  else {
    try {
      verifyInclusion(position - 1, cp.size, computed, proof as Buffer[], cp.rootHash);
      t.pass('inclusion');
      included = true;
    } catch (e) {
      t.fail(name, 'inclusion', isTlogError(e) ? `${e.code}: ${e.message}` : (e as Error).message);
    }
  }
  if (leaf) {
    let ev: PackLeafEvent;
    try {
      ev = deps.parseLeaf(leaf);
    } catch (e) {
      t.fail(name, 'leaf_event', (e as Error).message);
      return;
    }
    if (ev.position !== position) t.fail(name, 'leaf_event', `the leaf holds the event at position ${ev.position}, not ${position}`);
    else if (ev.type !== m.type) t.fail(name, 'leaf_event', `the leaf holds a ${ev.type} event; the member says ${String(m.type)}`);
    else {
      t.pass('leaf_event');
      // Only a leaf proven under the checkpoint says anything of its stream (one that is not already failed `inclusion`).
      if (included) links?.set(position, linkOf(ev, leaf));
      else links?.delete(position);
    }
    events.set(position, ev.format === 3 ? payloadOf(ev, name, m, deps, t) : ev);
  }
}

/**
 * A format 3 event with its payload checked (`payload_commitment`), or, when
 * the member says the payload was erased, the event without content marked
 * erased (listed; the erasure event is checked later, {@link checkErasures}),
 * or null when the payload is withheld.
 */
function payloadOf(ev: PackLeafEvent, name: string, m: Obj, deps: PackDeps, t: Tally): PackLeafEvent | null {
  const er = m.erased;
  if (isObj(er)) {
    const e = { erasure_id: String(er.erasure_id), position: Number(er.position), erased_at: String(er.erased_at), by: String(er.by), legal_basis: String(er.legal_basis), reason: String(er.reason) };
    if (m.payload !== null && m.payload !== undefined) t.fail(name, 'payload_commitment', 'the member says its payload was erased and still carries one');
    t.counts.erased++;
    t.notChecked.push(`${name}: content erased on ${e.erased_at} by ${e.by} (${e.legal_basis}): ${e.reason}; its leaf and inclusion are checked, its content cannot be`);
    return { ...ev, data: null, erased: e };
  }
  if (m.payload === null || m.payload === undefined) {
    t.counts.withheld++;
    t.notChecked.push(`${name}: payload withheld (${typeof m.withheld === 'string' ? m.withheld : 'no reason given'}); the leaf is checked, the content it commits to is not`);
    return null;
  }
  const payload = b64(m.payload);
  const salt = typeof m.payload_salt === 'string' && /^[0-9a-f]{64}$/.test(m.payload_salt) ? Buffer.from(m.payload_salt, 'hex') : null;
  if (!payload || !salt) {
    t.fail(name, 'payload_commitment', 'payload is not base64 or payload_salt is not 64 lowercase hex digits');
    return null;
  }
  const r = deps.withPayload(ev, payload, salt);
  if (!r.ok) {
    t.fail(name, 'payload_commitment', `${r.code}: ${r.message}`);
    return null;
  }
  t.pass('payload_commitment');
  return r.event;
}

/**
 * Every erased member names the `PayloadsErased` event that erased it: that
 * event must be in the pack, its payload held, and list the member's
 * position (`positions`); otherwise `payload_commitment` fails for it (an
 * erasure claimed without its record is a payload withheld unexplained).
 */
export function checkErasures(events: PackEvents, t: Tally): void {
  for (const [position, ev] of events) {
    if (!ev?.erased) continue;
    const name = memberName.event(position);
    const by = events.get(ev.erased.position);
    let listed = false;
    if (by && by.type === 'PayloadsErased' && by.data !== null) {
      try {
        const d = JSON.parse(by.data) as { positions?: unknown };
        listed = Array.isArray(d.positions) && d.positions.includes(position);
      } catch {
        listed = false;
      }
    }
    // Backed by its erasure: listed (not_checked), never counted as a passed check on content.
    if (!listed) t.fail(name, 'payload_commitment', `its payload is said erased by the event at position ${ev.erased.position}, which is not a PayloadsErased event in the pack that lists position ${position}`);
  }
}

/**
 * What the `PayloadsErased` event in the pack retained of the erased event
 * at `position` (its data without content: seq, ids, tool, provenance, the
 * verdict at ingestion), or null when the event is not erased or its
 * erasure event is not in the pack with its payload.
 */
export function retainedOf(events: PackEvents, position: number): Obj | null {
  const ev = events.get(position);
  if (!ev?.erased) return null;
  const by = events.get(ev.erased.position);
  if (!by || by.type !== 'PayloadsErased' || by.data === null) return null;
  try {
    const d = JSON.parse(by.data) as { retained?: Record<string, unknown> };
    const r = d.retained?.[String(position)];
    return isObj(r) ? r : null;
  } catch {
    return null;
  }
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
