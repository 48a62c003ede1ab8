/** The options the `aer1 log` commands share: the log key, witnesses and quorum (the trust policy), repeatable and numeric flags. */
import { InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { NoteVerifier, parseVerifierKey, SIG_COSIGNATURE_V1, SIG_ED25519 } from '../core/tlog';
import { CliError, errorText } from './io';
import { TrustPolicy } from '../core/tlog/quorum';

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function wholeNumber(min: number, what: string): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected ${what} (a whole number${min > 0 ? ` of at least ${min}` : ''})`);
    return n;
  };
}

/** Parse `--vkey`: a log vkey (type 0x01) whose name is the log origin. */
export function logKey(vkey: string | undefined): NoteVerifier {
  if (vkey === undefined) throw new CliError('--vkey VKEY (the log verifier key, <origin>+<key id>+<key>) is required');
  let k: NoteVerifier;
  try {
    k = parseVerifierKey(vkey.trim());
  } catch (e) {
    throw new CliError(`--vkey is not a verifier key: ${errorText(e)}`);
  }
  if (k.type !== SIG_ED25519) throw new CliError(`--vkey ${k.name} is not a log key (type 0x01); witness keys go to --witness`);
  return k;
}

/** The trust policy from `--vkey`, `--witness` (repeatable) and `--quorum` (default: every witness given). */
export function trustPolicy(opts: { vkey?: string; witness?: string[]; quorum?: number; tsaCerts?: string; nostrPubkey?: string }): TrustPolicy {
  const log = logKey(opts.vkey);
  const witnesses = (opts.witness ?? []).map((v) => {
    let k: NoteVerifier;
    try {
      k = parseVerifierKey(v.trim());
    } catch (e) {
      throw new CliError(`--witness ${JSON.stringify(v.slice(0, 80))} is not a verifier key: ${errorText(e)}`);
    }
    if (k.type !== SIG_COSIGNATURE_V1) throw new CliError(`--witness ${k.name} is not a witness key (type 0x04)`);
    return k;
  });
  if (new Set(witnesses.map((w) => w.vkey)).size !== witnesses.length) throw new CliError('a --witness key is given twice');
  if (opts.quorum !== undefined && witnesses.length === 0) throw new CliError('--quorum K needs the witnesses: give each with --witness VKEY');
  const quorum = opts.quorum ?? witnesses.length;
  if (quorum > witnesses.length) throw new CliError(`--quorum ${quorum} is more than the ${witnesses.length} witness${witnesses.length === 1 ? '' : 'es'} given`);
  let tsaCertsPem: string | undefined;
  if (opts.tsaCerts !== undefined) {
    try {
      tsaCertsPem = readFileSync(opts.tsaCerts, 'utf8');
    } catch (e) {
      throw new CliError(`cannot read --tsa-certs ${opts.tsaCerts}: ${errorText(e)}`);
    }
  }
  if (opts.nostrPubkey !== undefined && !/^[0-9a-fA-F]{64}$/.test(opts.nostrPubkey)) throw new CliError('--nostr-pubkey is the publisher key in hex (64 characters; the ledger prints it with create-nostr-key, /health shows it)');
  return { log, witnesses, quorum, ...(tsaCertsPem === undefined ? {} : { tsaCertsPem }), ...(opts.nostrPubkey === undefined ? {} : { nostrPubkey: opts.nostrPubkey.toLowerCase() }) };
}
