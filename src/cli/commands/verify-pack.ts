/**
 * `aer1 verify-pack FILE --vkey LOG_VKEY [--witness VKEY ... --quorum K] [--tsa-certs FILE] [--json]`
 *
 * An evidence pack (`GET /api/jobs/{id}/evidence`, `/api/workflows/{id}/evidence`,
 * `/api/coverage-reports/{id}/evidence`; docs/evidence-pack.md) checked
 * offline with no server: the manifest, the checkpoint's signature and
 * cosignatures, its timestamp, every inclusion proof, every record against
 * its leaf, every AER-1 verdict, and every coverage report recomputed
 * (src/core/pack/check.ts, phases over the lines src/cli/pack-check.ts reads). Exit 0 all verified, 1 anything fails (every
 * failure is listed with its member and check), anything is withheld, or a
 * named receipt is only stated not recorded (the server's word, listed),
 * 2 usage or a file that cannot be read or is not a pack. The exit code says
 * whether the pack is authentic; what the subject's coverage report
 * concludes (`subject_result`: findings or full coverage) is printed right
 * under the result, so a verified pack of findings is never read as green.
 */
import { NoteVerifier, parseVerifierKey } from '../../core/tlog';
import { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { CliError, CliIo, EXIT_NOT_VALID, EXIT_OK, RunContext, writeAll } from '../io';
import { checkPack, PackErrorCode, PackReport } from '../pack-check';
import { errorAnswerInFile, errorAnswerText } from '../recognise';
import { safe } from '../report';
import { collect, trustPolicy, wholeNumber } from '../log-options';

export interface VerifyPackOptions {
  vkey?: string;
  witness?: string[];
  quorum?: number;
  tsaCerts?: string;
  /** `--nostr-pubkey`: the trusted Nostr publisher key (64 hex). */
  nostrPubkey?: string;
  trustedKey?: string[];
  json?: boolean;
}

const CHECK_TITLES: [PackErrorCode, string][] = [
  ['member_missing', 'every member the manifest lists is in the pack'],
  ['manifest', 'members and manifest chunks match the manifest (SHA-256)'],
  ['vkey', 'the pack names the --vkey log key'],
  ['checkpoint_signature', "checkpoint signed by the log's key"],
  ['cosignatures', 'witness cosignatures (quorum)'],
  ['timestamp', 'RFC 3161 timestamp of the checkpoint'],
  ['nostr_event', 'the Nostr anchor is a NIP-01 event'],
  ['nostr_signature', 'Nostr anchor event id and signature (BIP-340)'],
  ['nostr_content', 'the Nostr anchor carries a checkpoint signed by the log'],
  ['nostr_consistency', "the Nostr-anchored checkpoint is an earlier state of the pack's (consistency proof)"],
  ['nostr_pubkey', 'the Nostr anchor is by --nostr-pubkey'],
  ['leaf_hash', 'leaf hashes computed from the leaf bytes'],
  ['inclusion', 'inclusion proofs against the checkpoint root'],
  ['leaf_event', 'leaves are the canonical ledger events at their positions'],
  ['payload_commitment', 'format 3 payloads match their leaf commitments; erased content is backed by its erasure event in the pack'],
  ['member_name', 'record members named as the format names them'],
  ['duplicate', 'no record held twice'],
  ['subject', "events and records on the subject's streams, every named receipt held"],
  ['leaf_bytes', "records carry exactly their event's bytes"],
  ['plan_digest', 'plan digests'],
  ['aer1_verdict', 'AER-1 verdicts (receipts, timeline chain with commitments, workflow, outcome reports)'],
  ['report_digest', 'report digests'],
  ['report_recomputed', 'coverage reports recomputed from the pack (same digest)'],
  ['stream_heads', "stream-heads statements signed by the log key as of the pack's checkpoint"],
  ['stream_incomplete', 'every named stream held from its stated head back to its first event'],
  ['stream_unlisted', 'every stream the subject spans named by a statement'],
];

/** The readable report. */
export function packText(r: PackReport, file: string): string {
  const out: string[] = [];
  out.push(`Evidence pack ${safe(file)}`);
  if (r.subject) out.push(`Subject: ${safe(r.subject.kind)} ${safe(r.subject.id)}`);
  if (r.checkpoint) out.push(`Checkpoint: ${safe(r.checkpoint.origin)} size ${r.checkpoint.size}, root ${r.checkpoint.root}`);
  const c = r.counts;
  out.push(membersLine(c));
  out.push('');
  const failedChecks = new Map<string, number>();
  for (const f of r.failures) failedChecks.set(f.check, (failedChecks.get(f.check) ?? 0) + 1);
  for (const [name, title] of CHECK_TITLES) {
    const ok = r.passed[name] ?? 0;
    const bad = failedChecks.get(name) ?? 0;
    if (ok === 0 && bad === 0) {
      if (name === 'timestamp' && r.timestamp === 'not_checked') out.push(`  – ${title}: NOT CHECKED (give --tsa-certs)`);
      else if (name === 'cosignatures' || name === 'timestamp') out.push(`  – ${title}: not checked (${name === 'cosignatures' ? 'no --witness given' : 'the pack carries no token'})`);
      continue;
    }
    out.push(`  ${bad ? '✗' : '✓'} ${title}: ${ok} passed${bad ? `, ${bad} FAILED` : ''}`);
  }
  if (r.cosignatures.length) out.push(`  cosigned by ${r.cosignatures.map((x) => `${safe(x.name)} at ${new Date(x.timestamp * 1000).toISOString()}`).join(', ')}`);
  if (r.timestamp && r.timestamp !== 'not_checked') out.push(`  the checkpoint existed at ${safe(r.timestamp.gen_time)}, per ${safe(r.timestamp.tsa)}`);
  if (r.nostr) out.push(`  checkpoint ${r.nostr.size} anchored on Nostr: event ${r.nostr.event_id} by ${r.nostr.pubkey}${r.nostr.pubkey_checked ? ' (--nostr-pubkey)' : ' (publisher NOT checked)'}, created ${new Date(r.nostr.created_at * 1000).toISOString()}`);
  const rv = Object.entries(r.verdicts.receipts).map(([v, n]) => `${n} ${v}`).join(', ');
  if (rv) out.push(`  receipts: ${rv}`);
  if (r.verdicts.timeline) out.push(`  timeline: ${r.verdicts.timeline}`);
  if (r.verdicts.workflow) out.push(`  workflow: ${r.verdicts.workflow}`);
  const ov = Object.entries(r.verdicts.outcomes).map(([v, n]) => `${n} ${v}`).join(', ');
  if (ov) out.push(`  outcome reports: ${ov}`);
  for (const x of r.reports) out.push(`  report ${safe(x.report_id)}: digest ${x.digest}, ${x.recomputed === null ? 'not recomputed' : `recomputed ${x.recomputed}`}`);
  out.push(completenessLine(r.completeness));
  if (r.not_checked.length) {
    out.push('', 'Not checked:');
    for (const n of r.not_checked.slice(0, 50)) out.push(`  – ${safe(n, 300)}`);
    if (r.not_checked.length > 50) out.push(`  … and ${r.not_checked.length - 50} more`);
  }
  if (r.failures.length) {
    out.push('', `Failures (${r.failures.length}):`);
    for (const f of r.failures) out.push(`  ✗ ${safe(f.member)}: ${f.check}: ${safe(f.detail, 400)}`);
  }
  out.push('');
  out.push(
    r.verified
      ? verifiedLine(r)
      : `Result: NOT VERIFIED (${r.failures.length} failure${r.failures.length === 1 ? '' : 's'}${r.completeness.not_provable_before !== null ? `; completeness not provable before position ${r.completeness.not_provable_before}` : ''}${r.counts.withheld ? `, ${r.counts.withheld} event${r.counts.withheld === 1 ? '' : 's'} withheld` : ''}${r.counts.withheld_records ? `, ${r.counts.withheld_records} record${r.counts.withheld_records === 1 ? '' : 's'} withheld` : ''})${r.counts.not_recorded ? `; ${r.counts.not_recorded} receipt${r.counts.not_recorded === 1 ? '' : 's'} the subject names ${r.counts.not_recorded === 1 ? 'is' : 'are'} only stated by the ledger to be not recorded (listed above): that cannot be checked offline` : ''}`,
  );
  // What the subject's report concludes, right under the result: an authentic pack of a report with findings is not green.
  const sr = r.subject_result;
  // A pack that did not verify establishes nothing: the report's words are only what it states.
  const said = sr ? (sr.headline !== null ? safe(sr.headline, 1200) : `result ${safe(sr.result)}`) : '';
  // A job or workflow pack holding reports: the newest one's conclusion, labelled as such (the pack's subject is the job or workflow).
  const which = r.subject?.kind === 'coverage_report' ? 'Subject: coverage report' : 'Newest report in this pack: coverage report';
  if (sr && !sr.established) out.push(`${which} ${safe(sr.report_id)} states ${said} — not established: this pack did not verify`);
  else if (sr) out.push(`${which} ${safe(sr.report_id)} concludes: ${said}${sr.result === 'full_coverage' ? '' : ' (the pack is authentic evidence of these findings, not of full coverage)'}`);
  out.push('What this does not prove: that the recorded actions had the effects claimed, or that nothing happened outside the recorder (see each report\'s does_not_prove); who owns a key is the ledger\'s statement, not in the log.');
  return out.join('\n') + '\n';
}

/** What the stream-heads statements establish (issue 30), in one line. */
function completenessLine(c: PackReport['completeness']): string {
  if (c.statements === 0) return '  completeness: NOT SHOWN (no stream-heads statement verified)';
  const base = `${c.statements} statement${c.statements === 1 ? '' : 's'} naming ${c.streams} stream${c.streams === 1 ? '' : 's'}`;
  if (c.not_provable_before !== null) return `  completeness: completeness not provable before position ${c.not_provable_before} (${base}; older events are format 1 or 2, without stream_prev)`;
  return c.proven ? `  completeness: every stream held to its signed head (${base})` : `  completeness: NOT SHOWN (${base}; see the failures and what was not checked)`;
}

/**
 * The result line of a verified pack. With erased members (issue 29) it says
 * that their content is gone and was not verified, and how many reports
 * could no longer be recomputed: never "every verdict and report recomputed".
 */
function verifiedLine(r: PackReport): string {
  const erased = r.counts.erased;
  const stale = r.reports.filter((x) => x.recomputed !== x.digest).length;
  const absent = r.counts.not_recorded;
  // Receipts the subject names that no event records, as the signed stream-heads statement says (issue 30).
  const unrecorded = absent ? `; ${absent} receipt${absent === 1 ? '' : 's'} the subject names ${absent === 1 ? 'is' : 'are'} not recorded as of the checkpoint, as the log key's signed stream-heads statement says` : '';
  if (erased === 0 && stale === 0) return `Result: VERIFIED (every member matches the manifest, every record is in the log under the signed checkpoint, every verdict and report recomputed, every stream held to its signed head)${unrecorded}`;
  const parts = [`${erased} event${erased === 1 ? '' : 's'} erased (listed above): recorded under the signed checkpoint, their content gone and not verified`];
  if (stale) parts.push(`${stale} report${stale === 1 ? '' : 's'} issued before an erasure no longer recomputable (${stale === 1 ? 'its' : 'their'} stored digest checked)`);
  return `Result: VERIFIED (every member matches the manifest, every record is in the log under the signed checkpoint, every content held verified, every stream held to its signed head); ${parts.join('; ')}${unrecorded}`;
}

/**
 * The members line: every kind held, adding up to the total (the header, the
 * log members, events, records, members of no known kind), then the manifest
 * chunks, which are not members but are compared with the final manifest too.
 */
export function membersLine(c: PackReport['counts']): string {
  const kinds: [number, string][] = [
    [c.header, 'header'],
    [c.log, 'log (key, checkpoint, timestamp, Nostr anchor, stream heads)'],
    [c.events, 'events'],
    [c.receipts, 'receipts'],
    [c.entries, 'entries'],
    [c.commitments, 'commitments'],
    [c.workflows, 'workflow receipts'],
    [c.plans, 'plan versions'],
    [c.reports, 'coverage reports'],
    [c.outcomes, 'outcome reports'],
  ];
  if (c.other) kinds.push([c.other, 'of no known kind']);
  return `Members: ${c.members} (${kinds.map(([n, what]) => `${n} ${what}`).join(', ')}); with ${c.manifest_chunks} manifest chunk${c.manifest_chunks === 1 ? '' : 's'} and the final manifest`;
}

/** The `--trusted-key` vkeys (Ed25519, type 0x01), as the server's TRUSTED_COMMITMENT_KEYS. Throws CliError naming a bad one. */
function commitmentKeys(keys: string[] | undefined): NoteVerifier[] {
  return (keys ?? []).map((v) => {
    try {
      return parseVerifierKey(v.trim());
    } catch (e) {
      throw new CliError(`--trusted-key ${JSON.stringify(v.slice(0, 80))} is not a verifier key: ${(e as Error).message}`);
    }
  });
}

/** `aer1 verify-pack`: returns the exit code. */
export async function verifyPackCommand(file: string, opts: VerifyPackOptions, io: CliIo): Promise<number> {
  const policy = { ...trustPolicy(opts), commitmentKeys: commitmentKeys(opts.trustedKey) };
  if (!existsSync(file) || !statSync(file).isFile()) throw new CliError(`cannot read ${file}: not a file`);
  const answer = errorAnswerInFile(file);
  if (answer) throw new CliError(errorAnswerText(file, answer, 'an evidence pack'));
  let report: PackReport;
  try {
    report = await checkPack(file, policy);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  if (!report.is_pack) throw new CliError(`${file} is not an evidence pack (aer1-evidence-pack/1: no header, event or manifest line)`);
  await writeAll(io.stdout, opts.json ? JSON.stringify(report, null, 2) + '\n' : packText(report, file));
  return report.verified ? EXIT_OK : EXIT_NOT_VALID;
}

/** Register `verify-pack` on `program`. */
export function registerVerifyPack(program: Command, ctx: RunContext): void {
  program
    .command('verify-pack')
    .description('check an evidence pack offline: manifest, checkpoint signature and cosignatures, timestamp, every inclusion proof, every record against its leaf, AER-1 verdicts, coverage reports recomputed')
    .argument('<file>', 'the pack, e.g. from GET /api/jobs/{id}/evidence')
    .option('--vkey <vkey>', 'the log verifier key, <origin>+<hex key id>+<base64 key> (from the operator)')
    .option('--witness <vkey>', 'a witness verifier key (type 0x04) whose cosignature counts; repeat for each witness', collect)
    .option('--quorum <k>', 'valid witness cosignatures needed (default: every --witness given)', wholeNumber(1, 'a quorum'))
    .option('--tsa-certs <pem>', 'PEM of the TSA certificate chain, to check the RFC 3161 timestamp the pack carries')
    .option('--nostr-pubkey <hex>', "the ledger's Nostr publisher key (64 hex), to check the publisher of the Nostr anchor the pack carries")
    .option('--trusted-key <vkey>', 'a key trusted for endpoint commitments (the server\'s TRUSTED_COMMITMENT_KEYS), to recompute reports with attested commitments; repeat for each', collect)
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExit codes: 0 verified; 1 a check failed (every failure is listed: member, check; a checkpoint --vkey does not sign is the one failure), bytes are withheld, or a named receipt is only stated not recorded; 2 usage error, or a file that cannot be read or is not a pack.')
    .action(async (file: string, opts: VerifyPackOptions) => {
      ctx.exitCode = await verifyPackCommand(file, opts, ctx.io);
    });
}
