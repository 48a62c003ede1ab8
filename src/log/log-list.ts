/**
 * This log's entry in the witness network's log list, which public
 * witnesses read to learn which logs to cosign.
 *
 * Format (cited from github.com/transparency-dev/witness-network,
 * log-list-format.md, served as witness-network.org/log-list-format; the
 * list's own validator is cmd/validate/main.go there): after the list's
 * `logs/v0` header, a log is these key-value lines, in this order:
 *
 *   vkey VKEY            the log's verifier key in vkey format; only Ed25519 (type 0x01) keys
 *   [origin ORIGIN]      omitted: the origin is the vkey's key name ("recommended for newly deployed logs")
 *   qpd QPD              add-checkpoint requests the log may make per day: decimal, no leading zeros, in [1, 2^31)
 *   contact CONTACT      an arbitrary string for humans to reach the log operator
 *
 * Logs ask to be added by email to the list maintainers
 * (witness-network.org/participate; see docs/witnesses.md).
 */
import { parseVerifierKey, SIG_ED25519 } from '../core/tlog';
import { originSchemeProblem } from './log-key';

/** Largest QPD the format allows (2^31 - 1). */
export const MAX_QPD = 2 ** 31 - 1;

/**
 * The add-checkpoint requests per day this ledger makes at most to each
 * witness while the log grows without pause: one per signed checkpoint, and
 * it signs at most one every CHECKPOINT_INTERVAL_MS (`intervalMs`). Retries
 * after a failure back off from 0.5 s to 30 s and are not counted.
 */
export function defaultQpd(intervalMs: number): number {
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 1) throw new RangeError(`CHECKPOINT_INTERVAL_MS must be a positive integer, got ${intervalMs}`);
  return Math.min(MAX_QPD, Math.ceil(86_400_000 / intervalMs));
}

/** Parse `--qpd`: decimal digits without leading zeros, in [1, 2^31). Throws a RangeError saying why. */
export function parseQpd(text: string): number {
  if (!/^[1-9][0-9]*$/.test(text)) throw new RangeError(`--qpd must be a decimal number without leading zeros, at least 1; got ${JSON.stringify(text.slice(0, 40))}`);
  const n = Number(text);
  if (n > MAX_QPD) throw new RangeError(`--qpd must be below 2^31 (${MAX_QPD + 1}); got ${text.slice(0, 40)}`);
  return n;
}

/**
 * The entry's lines, each ending in a newline: `vkey`, then `origin` only
 * when it differs from the vkey's key name, `qpd`, `contact`. Throws a
 * RangeError when the vkey is not an Ed25519 (type 0x01) key, the origin
 * has a URL scheme, the qpd is outside [1, 2^31), or the contact is empty
 * or holds a control character (a newline would end the entry).
 */
export function logListEntry(opts: { vkey: string; origin: string; qpd: number; contact: string }): string {
  const v = parseVerifierKey(opts.vkey);
  if (v.type !== SIG_ED25519) throw new RangeError('the log list takes Ed25519 log keys (type 0x01) only');
  const scheme = originSchemeProblem(opts.origin, 'the origin');
  if (scheme) throw new RangeError(scheme);
  if (!Number.isSafeInteger(opts.qpd) || opts.qpd < 1 || opts.qpd > MAX_QPD) throw new RangeError(`qpd must be in [1, 2^31), got ${opts.qpd}`);
  const contact = opts.contact.trim();
  if (contact === '') throw new RangeError('the contact is empty: give an email address or URL where witness operators reach you (--contact)');
  if (/\p{Cc}/u.test(contact)) throw new RangeError('the contact holds a control character (one line, no tabs)');
  return `vkey ${opts.vkey}\n${opts.origin === v.name ? '' : `origin ${opts.origin}\n`}qpd ${opts.qpd}\ncontact ${contact}\n`;
}
