/** The output of `aer1 log` commands: a proof report as text or JSON, a note indented as evidence; the trust options they share. */
import { JSON_PROOF_FORMAT, ProofReport } from '../../core/tlog/log-proof';
import { safe } from '../report';

// ---------------------------------------------------------------- output

const MARK = (ok: boolean | null): string => (ok === true ? '✓' : ok === false ? '✗' : '–');

/** The readable report of a proof. */
export function proofText(r: ProofReport, source: string): string {
  const form = r.form === 'json' ? JSON_PROOF_FORMAT : r.form === 'tlog-proof' ? 'c2sp.org/tlog-proof' : 'checkpoint, inclusion proof and leaf fetched now';
  const out = [`${r.form === 'fetched' ? 'Inclusion' : 'Proof'}: ${safe(source)} (${form})`];
  for (const c of r.checks) out.push(`  ${MARK(c.ok)} ${c.name}: ${safe(c.detail, 400)}${c.ok === false && c.code ? ` [${c.code}]` : ''}`);
  if (r.record) {
    const e = r.record;
    out.push(`Record: position ${e.position}, stream ${safe(e.stream_id)} #${e.stream_position}, type ${safe(e.type)}, recorded ${safe(e.recorded_at)}, by ${e.key_id === null ? 'an unattributed writer (format 1)' : `key ${safe(e.key_id)} (${safe(e.key_name ?? '')})`}`);
  }
  if (r.receipt) out.push(`Receipt: ${safe(r.receipt.id ?? '(no id)')}: AER-1 verdict ${r.receipt.verdict.toUpperCase()}${r.receipt.reasons.length ? ` (${r.receipt.reasons.map((x) => safe(x)).join(', ')})` : ''}`);
  if (r.verified) {
    const cp = r.checkpoint!;
    const notChecked = ['timestamp', 'nostr'].filter((n) => r.checks.some((c) => c.name === n && c.ok === null)).map((n) => (n === 'nostr' ? 'the Nostr anchor' : 'the timestamp'));
    const extra = notChecked.length ? ` (${notChecked.join(' and ')} ${notChecked.length === 1 ? 'was' : 'were'} not checked)` : '';
    out.push(`Result: VERIFIED: leaf ${r.leaf_index} is in log ${safe(cp.origin)} at tree size ${cp.size}${extra}`);
  } else {
    out.push(`Result: NOT VERIFIED: ${r.failed.length ? `failed: ${r.failed.join(', ')}` : 'a required check could not be made'}`);
  }
  return out.join('\n') + '\n';
}

export function proofJson(r: ProofReport, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...extra, ...r }, null, 2) + '\n';
}


/** The trust policy options of every `aer1 log` command. */
export interface PolicyOptions {
  vkey?: string;
  witness?: string[];
  quorum?: number;
  tsaCerts?: string;
  /** `--nostr-pubkey`: the trusted Nostr publisher key (verify-proof). */
  nostrPubkey?: string;
  json?: boolean;
}

/** A note indented for evidence, each line made safe for a terminal. */
export function indent(note: string): string {
  return note
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => (l === '' ? '' : `    ${safe(l, 400)}`))
    .join('\n');
}
