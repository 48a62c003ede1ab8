/**
 * Who may write what (integrity issue, section 2). Pure rules over a
 * {@link Principal}; the services call them inside their write transactions
 * so a refusal writes nothing.
 */
import { LedgerError } from '../common/errors';
import { RecordedBy } from '../core/ledger/event-hash';
import type { Writer } from '../ledger/events.repository';
import type { Principal } from './api-keys.service';

/** What an event records of the key that wrote it. */
export function recordedBy(p: Pick<Principal, 'key_id' | 'name'>): RecordedBy {
  return { key_id: p.key_id, name: p.name };
}

/** True when `p` and `w` are the same key, or keys of the same named owner. */
export function sameOwner(p: Pick<Principal, 'key_id' | 'owner'>, w: Pick<Writer, 'key_id' | 'owner'>): boolean {
  if (p.key_id === w.key_id) return true;
  return p.owner !== null && w.owner !== null && p.owner === w.owner;
}

/**
 * 403 `not_owner` unless `p` wrote the record, shares its owner, or is an
 * admin. A record written before attribution (`writer` null) can only be
 * acted on by an admin: nobody can show it is theirs.
 */
export function assertOwner(p: Principal, writer: Writer | null, what: string): void {
  if (p.role === 'admin') return;
  if (writer && sameOwner(p, writer)) return;
  const who = writer ? `key ${JSON.stringify(writer.name)}${writer.owner ? ` of owner ${JSON.stringify(writer.owner)}` : ''}` : 'a key before attribution was recorded (only an admin may act on it)';
  throw new LedgerError(403, 'not_owner', `${what} was recorded by ${who}; this key may not act on it; nothing was recorded`).withReasons();
}

/**
 * May `p` claim `provenanceClass` (S5)? A key without a systems list may claim
 * any class (as before lists existed). A restricted key may claim
 * `LOGGED BY AGENT`, `EXECUTED BY X` only for X in its list, and
 * `OBSERVED VIA GATEWAY` only with `gateway`. Admin keys may claim any.
 */
export function provenancePermitted(p: Pick<Principal, 'role' | 'systems' | 'gateway'>, provenanceClass: string | null): boolean {
  if (p.role === 'admin' || p.systems === null || provenanceClass === null) return true;
  if (provenanceClass === 'LOGGED BY AGENT') return true;
  if (provenanceClass === 'OBSERVED VIA GATEWAY') return p.gateway;
  if (provenanceClass.startsWith('EXECUTED BY ')) return p.systems.includes(provenanceClass.slice('EXECUTED BY '.length));
  return false;
}

/** 403 `provenance_not_permitted` when `p` may not claim `provenanceClass`; `where` says which entry or line. */
export function assertProvenance(p: Principal, provenanceClass: string | null, where = ''): void {
  if (provenancePermitted(p, provenanceClass)) return;
  const allowed = ['LOGGED BY AGENT', ...(p.gateway ? ['OBSERVED VIA GATEWAY'] : []), ...(p.systems ?? []).map((s) => `EXECUTED BY ${s}`)];
  throw new LedgerError(403, 'provenance_not_permitted', `key ${JSON.stringify(p.name)} may not claim provenance ${JSON.stringify(provenanceClass)}${where}; it may claim ${allowed.map((a) => JSON.stringify(a)).join(', ')}; nothing was recorded`, {
    provenance_class: provenanceClass,
    permitted: allowed,
  }).withReasons();
}

/** Auditors and admins read canonical bytes that a `metadata` publication setting withholds from the public (S13). */
export function mayReadWithheld(viewer: Pick<Principal, 'role'> | null): boolean {
  return viewer !== null && (viewer.role === 'auditor' || viewer.role === 'admin');
}

/**
 * 403 `system_not_permitted` unless `p` is an `outcome` key whose systems
 * list names `system` (issue 18). Admin keys are refused too: an outcome is
 * the word of the owning system, and only its own key can give it.
 */
export function assertSpeaksFor(p: Principal, system: string): void {
  if (p.role === 'outcome' && p.systems !== null && p.systems.includes(system)) return;
  const may = p.role === 'outcome' ? (p.systems ?? []) : [];
  throw new LedgerError(
    403,
    'system_not_permitted',
    `key ${JSON.stringify(p.name)} (role ${p.role}) may not report outcomes for system ${JSON.stringify(system)}; ${may.length ? `it speaks for ${may.map((s) => JSON.stringify(s)).join(', ')}` : 'only an outcome key naming that system may'}; nothing was recorded`,
    { system, permitted: may },
  ).withReasons();
}
