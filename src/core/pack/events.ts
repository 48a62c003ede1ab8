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

type Obj = Record<string, unknown>;

/** The pack's events by position: the parsed leaf, or null when its bytes are withheld. */
export type PackEvents = Map<number, PackLeafEvent | null>;

/** One `event/<position>` member checked against the checkpoint `cp` (null: none signed by --vkey precedes it). */
export function eventMember(events: PackEvents, name: string, m: Obj, cp: Checkpoint | null, deps: PackDeps, t: Tally): void {
  t.counts.events++;
  const position = m.position;
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1 || name !== memberName.event(position) || m.leaf_index !== position - 1) {
    t.fail(name, 'format', 'position and leaf_index do not match the member name');
    return;
  }
  const stated = b64(m.leaf_hash);
  const proof = Array.isArray(m.proof) ? m.proof.map(b64) : [null];
  if (m.leaf === null) {
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
  if (cp === null) t.fail(name, 'inclusion', 'not checked: no checkpoint signed by --vkey precedes it');
  else if (!computed || proof.some((p) => p === null)) t.fail(name, 'inclusion', 'the proof or leaf hash is not base64');
  else {
    try {
      verifyInclusion(position - 1, cp.size, computed, proof as Buffer[], cp.rootHash);
      t.pass('inclusion');
    } catch (e) {
      t.fail(name, 'inclusion', isTlogError(e) ? `${e.code}: ${e.message}` : (e as Error).message);
    }
  }
  if (leaf) {
    try {
      const ev = deps.parseLeaf(leaf);
      if (ev.position !== position) t.fail(name, 'leaf_event', `the leaf holds the event at position ${ev.position}, not ${position}`);
      else if (ev.type !== m.type) t.fail(name, 'leaf_event', `the leaf holds a ${ev.type} event; the member says ${String(m.type)}`);
      else t.pass('leaf_event');
      events.set(position, ev);
    } catch (e) {
      t.fail(name, 'leaf_event', (e as Error).message);
    }
  }
}
