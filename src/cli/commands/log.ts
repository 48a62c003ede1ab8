/**
 * `aer1 log ...`: the auditor's side of the verifiable log (issue 14, "For
 * auditors"; issue 15, witnesses).
 *
 * - `aer1 log verify-proof FILE --vkey VKEY [--receipt ID] [--position N] [--witness VKEY]... [--quorum K] [--tsa-certs PEM] [--json]`:
 *   a proof file (c2sp.org/tlog-proof with the leaf in `extra`, or
 *   `aer1-log-proof/1` JSON), checked with no network (src/core/tlog/log-proof.ts).
 *   `--receipt ID` / `--position N` name the record the file must prove
 *   (`leaf_is_record`). Exit 0 verified; 1 a check failed (each failing check
 *   is named); 2 usage error, or a file that cannot be read or is not a proof file.
 * - `aer1 log monitor (--url BASE | --tiles URL) --vkey VKEY --state FILE [--watch SECONDS] [--witness VKEY]... [--quorum K] [--json]`:
 *   fetch `GET BASE/checkpoint`, check its signature (and the witness
 *   quorum), check it is consistent with the checkpoint saved in FILE
 *   (`GET BASE/api/ledger/proof/consistency`), then save it (temp file,
 *   fsync, rename). Exit 0 consistent (or first run: trust on first use);
 *   1 a fork (same size and another root, or a consistency proof that fails),
 *   a rollback (smaller than the saved one), a bad signature or a missing
 *   quorum: both checkpoints are printed and FILE is never overwritten;
 *   2 usage error, unusable state file, or the log could not be reached or
 *   answered nonsense. With `--tiles URL` the checkpoint and tiles come from a
 *   C2SP tlog-tiles copy (docs/tiles.md): its tiles must give the signed
 *   root (else exit 2) and the consistency proof is computed from them.
 *   With `--watch S` it checks every S seconds until
 *   SIGINT or SIGTERM and exits with the worst result seen (1 over 2 over 0).
 *   `--check-heads DIR` also checks the stream-heads statements saved in DIR (./log-heads.ts).
 * - `aer1 log check-heads`: see ./log-heads.ts.
 * - `aer1 log inclusion (--url BASE | --tiles URL [--url BASE]) --vkey VKEY (--receipt ID | --index I) [--witness VKEY]... [--quorum K] [--json]`:
 *   fetch the checkpoint, the inclusion proof and the leaf, check them as
 *   verify-proof does. Exit 0 included; 1 a check failed, the receipt is not
 *   recorded, or the leaf is not yet under the checkpoint; 2 usage or network
 *   (log-inclusion.ts).
 */
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { Checkpoint, compareCheckpoints, judgeGrowth, verifyCheckpoint } from '../../core/tlog';
import { CliError, CliIo, errorText, EXIT_NOT_VALID, EXIT_OK, EXIT_USAGE, RunContext, writeAll } from '../io';
import { checkProof, malformedReport, NotAProofFile, ProofReport, readProofFile } from '../../core/tlog/log-proof';
import { quorumCheck, TrustPolicy } from '../../core/tlog/quorum';
import { safe } from '../report';
import { parseJsonBytes } from '../input';
import { refuseErrorAnswer } from '../recognise';
import { baseUrl, DEFAULT_TIMEOUT_S, getJson, getOk, hashList, httpGet, LogUnreachable } from '../log-client';
import { checkTilesRoot, consistencyFromTiles } from '../tiles-client';
import { collect, trustPolicy, wholeNumber } from '../log-options';
import { readState, saveAtomically } from '../monitor-state';
import { indent, PolicyOptions, proofJson, proofText } from './log-output';
import { inclusionCommand, InclusionOptions } from './log-inclusion';
import { monitorHeads, registerCheckHeads } from './log-heads';

export { proofText };

// ---------------------------------------------------------------- verify-proof


interface VerifyProofOptions extends PolicyOptions {
  /** The receipt the file must prove (its `ReceiptRecorded` event on stream `receipt:<id lowercase>`). */
  receipt?: string;
  /** The ledger position the file must prove (leaf index + 1). */
  position?: number;
}

/**
 * `leaf_is_record`: with `--receipt ID` the verified leaf must be that
 * receipt's `ReceiptRecorded` event, with `--position N` the event at that
 * ledger position; a proof of some other record fails (the report is changed in place).
 */
export function expectRecord(report: ProofReport, want: { receipt?: string; position?: number }): void {
  const e = report.record;
  const problems: string[] = [];
  if (want.receipt !== undefined) {
    const stream = `receipt:${want.receipt.toLowerCase()}`;
    if (e === null || e.stream_id !== stream || e.type !== 'ReceiptRecorded') problems.push(`the leaf is not the ReceiptRecorded event of receipt ${want.receipt} (it is ${e ? `a ${e.type} on stream ${e.stream_id}` : 'no ledger event'})`);
  }
  if (want.position !== undefined && (e === null || e.position !== want.position || report.leaf_index !== want.position - 1)) {
    problems.push(`the leaf is not the event at position ${want.position} (it is ${e ? `position ${e.position}` : `leaf index ${report.leaf_index}`})`);
  }
  if (want.receipt === undefined && want.position === undefined) return;
  const ok = problems.length === 0;
  const what = [want.receipt !== undefined ? `receipt ${want.receipt}'s ReceiptRecorded event` : null, want.position !== undefined ? `at position ${want.position}` : null].filter(Boolean).join(', ');
  report.checks.push({ name: 'leaf_is_record', ok, ...(ok ? {} : { code: 'not_this_record' }), detail: ok ? `the leaf is ${what}, as asked` : problems.join('; ') });
  if (!ok) {
    report.verified = false;
    report.failed.push('leaf_is_record');
  }
}

/** `aer1 log verify-proof`: returns the exit code. */
export async function verifyProofCommand(file: string, opts: VerifyProofOptions, io: CliIo): Promise<number> {
  const policy = trustPolicy(opts);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${errorText(e)}`);
  }
  let read: ReturnType<typeof readProofFile>;
  try {
    read = readProofFile(bytes, parseJsonBytes);
  } catch (e) {
    if (e instanceof NotAProofFile) {
      const parsed = parseJsonBytes(bytes);
      if (parsed.ok) refuseErrorAnswer(parsed.value, file, 'a proof file');
      throw new CliError(`${file} is ${e.message}`);
    }
    throw e;
  }
  const report = 'parts' in read ? await checkProof(read.parts, policy) : malformedReport(read.form, read.malformed);
  expectRecord(report, { receipt: opts.receipt, position: opts.position });
  await writeAll(io.stdout, opts.json ? proofJson(report, { file }) : proofText(report, file));
  return report.verified ? EXIT_OK : EXIT_NOT_VALID;
}

// ---------------------------------------------------------------- monitor

/** The outcome of one monitor round. */
export type MonitorResult = 'first_use' | 'consistent' | 'fork' | 'rollback' | 'bad_signature' | 'quorum_not_met' | 'error';

interface MonitorOptions extends PolicyOptions {
  url?: string;
  /** A C2SP tlog-tiles prefix (static copy or the API's base), read instead of the JSON API. */
  tiles?: string;
  state?: string;
  watch?: number;
  timeout?: number;
  checkHeads?: string; key?: string; // --check-heads: a folder of stream-heads statements (log-heads.ts monitorHeads), read with --key
}

interface Round {
  result: MonitorResult;
  exit: number;
  message: string;
  /** Text printed after the message (evidence). */
  evidence?: string;
  json: Record<string, unknown>;
}


const summary = (cp: Checkpoint): { origin: string; size: number; root: string } => ({ origin: cp.origin, size: cp.size, root: cp.rootHash.toString('base64') });

/** One monitor check. Network and state problems throw CliError (exit 2). */
async function monitorRound(base: string, file: string, policy: TrustPolicy, timeoutS: number, tiles: boolean): Promise<Round> {
  const saved = readState(file, policy.log);
  const url = `${base}/checkpoint`;
  const fetchedNote = (await getOk(url, timeoutS, 'text/plain')).toString('utf8');
  const both = (why: string): string =>
    [`Evidence (${why}):`, `  saved checkpoint (${safe(file)}):`, saved ? indent(saved.note) : '    (none)', `  checkpoint served at ${safe(url)}:`, indent(fetchedNote)].join('\n');
  const evidenceJson = { saved_checkpoint: saved?.note ?? null, served_checkpoint: fetchedNote };
  let fetched: Checkpoint;
  try {
    fetched = verifyCheckpoint(fetchedNote, [policy.log], policy.log.name).checkpoint;
  } catch (e) {
    const msg = `BAD SIGNATURE: the checkpoint served at ${url} does not verify with --vkey ${policy.log.name}: ${errorText(e)}. ${safe(file)} is kept as it was.`;
    return { result: 'bad_signature', exit: EXIT_NOT_VALID, message: msg, evidence: both('the served checkpoint is not signed by the log key'), json: { result: 'bad_signature', error: errorText(e), saved: saved ? summary(saved.cp) : null, ...evidenceJson } };
  }
  const current = summary(fetched);
  // A tiles copy: its tiles must give the signed root before anything is saved or proven from them (else exit 2).
  if (tiles) await checkTilesRoot({ base, timeoutS }, fetched);
  if (policy.witnesses.length > 0) {
    const q = quorumCheck(fetchedNote, policy);
    if (q.check.ok !== true) {
      const msg = `QUORUM NOT MET: the checkpoint of size ${fetched.size} is not cosigned by enough witnesses (${q.check.detail}). ${safe(file)} is kept as it was.`;
      return { result: 'quorum_not_met', exit: EXIT_NOT_VALID, message: msg, evidence: both('witness quorum not met'), json: { result: 'quorum_not_met', error: q.check.detail, saved: saved ? summary(saved.cp) : null, fetched: current, ...evidenceJson } };
    }
  }
  // The decision is the core's (src/core/tlog/monitor.ts); here only its I/O and its words.
  let step = compareCheckpoints(saved?.cp ?? null, fetched);
  if (step.result === 'first_use') {
    saveAtomically(file, fetchedNote);
    const msg = `FIRST RUN: no checkpoint was saved in ${safe(file)}; trusting this one on first use (nothing earlier to compare it with): ${safe(fetched.origin)} size ${fetched.size}, root ${current.root}. Saved.`;
    return { result: 'first_use', exit: EXIT_OK, message: msg, json: { result: 'first_use', saved: null, fetched: current } };
  }
  const old = saved!.cp;
  const fork = async (why: string): Promise<Round> => {
    // What the log now serves for the saved size, when it keeps it: more evidence, never trusted.
    let atSaved: string | null = null;
    try {
      const a = await httpGet(`${base}/api/ledger/checkpoints/${old.size}`, timeoutS, 'text/plain');
      if (a.status === 200) atSaved = a.body.toString('utf8');
    } catch {
      atSaved = null;
    }
    if (atSaved === fetchedNote) atSaved = null; // the served one again: nothing new
    let signed = false;
    try {
      signed = atSaved !== null && verifyCheckpoint(atSaved, [policy.log], policy.log.name).checkpoint.size === old.size;
    } catch {
      signed = false;
    }
    const extra = atSaved === null ? '' : `\n  checkpoint the log now serves for size ${old.size} (${safe(`${base}/api/ledger/checkpoints/${old.size}`)}; ${signed ? 'signed by the log' : 'NOT a valid checkpoint of that size signed by the log'}):\n${indent(atSaved)}`;
    const msg = `FORK: ${why}. The log has shown two histories; ${safe(file)} is kept as it was.`;
    return { result: 'fork', exit: EXIT_NOT_VALID, message: msg, evidence: both('two checkpoints signed by the log that cannot both be true') + extra, json: { result: 'fork', error: why, saved: summary(old), fetched: current, ...evidenceJson, log_checkpoint_at_saved_size: atSaved } };
  };
  if (step.result === 'rollback') {
    const msg = `ROLLBACK: the log serves size ${fetched.size}, smaller than the saved size ${old.size}. ${safe(file)} is kept as it was.`;
    return { result: 'rollback', exit: EXIT_NOT_VALID, message: msg, evidence: both('the log went back in time'), json: { result: 'rollback', saved: summary(old), fetched: current, ...evidenceJson } };
  }
  if (step.result === 'unchanged') {
    saveAtomically(file, fetchedNote); // same tree; may carry newer cosignatures
    return { result: 'consistent', exit: EXIT_OK, message: `CONSISTENT: ${safe(fetched.origin)} unchanged at size ${fetched.size} (same root)`, json: { result: 'consistent', saved: summary(old), fetched: current } };
  }
  if (step.result === 'needs_proof') {
    if (tiles) step = judgeGrowth(old, fetched, await consistencyFromTiles({ base, timeoutS }, step.first, fetched));
    else {
      const proofUrl = `${base}/api/ledger/proof/consistency?first=${step.first}&second=${step.second}`;
      const body = await getJson(proofUrl, timeoutS);
      if (body.first !== step.first || body.second !== step.second) throw new LogUnreachable(`${proofUrl} answered a proof from ${String(body.first)} to ${String(body.second)}`);
      step = judgeGrowth(old, fetched, hashList(body.proof, proofUrl));
    }
  }
  if (step.result === 'fork') return fork(step.detail);
  saveAtomically(file, fetchedNote);
  const msg = `CONSISTENT: ${safe(fetched.origin)} grew from size ${old.size} to ${fetched.size} (consistency proof verified); saved to ${safe(file)}`;
  return { result: 'consistent', exit: EXIT_OK, message: msg, json: { result: 'consistent', saved: summary(old), fetched: current } };
}

/** Worst of two exit codes: 1 (fork, bad signature) over 2 (could not check) over 0. */
function worse(a: number, b: number): number {
  const rank = (x: number): number => (x === EXIT_NOT_VALID ? 2 : x === EXIT_USAGE ? 1 : 0);
  return rank(b) > rank(a) ? b : a;
}

/**
 * `aer1 log monitor`: returns the exit code. With `watch`, rounds repeat
 * every `watch` seconds until SIGINT, SIGTERM or `stop` aborts.
 */
export async function monitorCommand(opts: MonitorOptions, io: CliIo, stop?: AbortSignal): Promise<number> {
  const policy = trustPolicy(opts);
  if (opts.tiles !== undefined && opts.url !== undefined) throw new CliError('give one of --url BASE (the JSON API) and --tiles URL (a tiles copy)');
  const base = opts.tiles !== undefined ? baseUrl(opts.tiles, '--tiles') : baseUrl(opts.url);
  if (opts.state === undefined) throw new CliError('--state FILE (where the last checkpoint seen is kept) is required');
  const file = opts.state;
  const t = opts.timeout ?? DEFAULT_TIMEOUT_S;
  const once = async (): Promise<number> => {
    let round: Round;
    try {
      round = await monitorRound(base, file, policy, t, opts.tiles !== undefined);
      const size = (round.json.fetched as { size?: number } | undefined)?.size;
      const h = opts.checkHeads !== undefined && round.exit === EXIT_OK && size !== undefined ? await monitorHeads(opts.checkHeads, base, policy.log, size, file, { timeout: t, key: opts.key ?? (process.env.AER1_AUDITOR_KEY || undefined) }) : null;
      if (h) round = { ...round, exit: h.exit, message: `${round.message}\n${h.text}`, json: { ...round.json, heads: h.json } };
    } catch (e) {
      if (!(e instanceof CliError) || opts.watch === undefined) throw e;
      // In a watch loop, an unreachable log is reported and the loop goes on.
      round = { result: 'error', exit: e.exitCode, message: `ERROR: ${firstLineOf(e.message)}`, json: { result: 'error', error: e.message } };
    }
    const at = new Date().toISOString();
    if (opts.json) await writeAll(io.stdout, JSON.stringify({ checked_at: at, url: base, origin: policy.log.name, state: file, ...round.json }) + '\n');
    else await writeAll(io.stdout, `${opts.watch !== undefined ? `${at} ` : ''}${round.message}\n${round.evidence ? round.evidence + '\n' : ''}`);
    return round.exit;
  };
  if (opts.watch === undefined) return once();

  const ac = new AbortController();
  const onSignal = (): void => ac.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  if (stop?.aborted) ac.abort();
  else stop?.addEventListener('abort', onSignal);
  let worst = EXIT_OK;
  try {
    while (!ac.signal.aborted) {
      worst = worse(worst, await once());
      await new Promise<void>((done) => {
        const timer = setTimeout(finish, (opts.watch as number) * 1000);
        function finish(): void {
          clearTimeout(timer);
          ac.signal.removeEventListener('abort', finish);
          done();
        }
        ac.signal.addEventListener('abort', finish);
      });
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stop?.removeEventListener('abort', onSignal);
  }
  return worst;
}

const firstLineOf = (s: string): string => s.split('\n')[0];

// ---------------------------------------------------------------- registration

function policyOptions(cmd: Command): Command {
  return cmd
    .option('--vkey <vkey>', 'the log verifier key, <origin>+<hex key id>+<base64 key> (GET /.well-known/aer1 shows it; get it from the operator, not only from the log)')
    .option('--witness <vkey>', 'a witness verifier key (type 0x04) whose cosignature counts; repeat for each witness', collect)
    .option('--quorum <k>', 'valid witness cosignatures needed (default: every --witness given)', wholeNumber(1, 'a quorum'))
    .option('--json', 'print the result as JSON');
}

/** Register `log verify-proof`, `log monitor` and `log inclusion` on `program`. */
export function registerLog(program: Command, ctx: RunContext): void {
  const log = program.command('log').description("audit the ledger's verifiable log: proofs offline, a monitor for forks, inclusion of a record");
  policyOptions(
    log
      .command('verify-proof')
      .description('check a proof file (c2sp.org/tlog-proof or aer1-log-proof/1 JSON) offline: checkpoint signature, witness quorum, inclusion, and what the leaf is')
      .argument('<file>', 'the proof file, e.g. from GET /api/receipts/{id}/proof'),
  )
    .option('--tsa-certs <pem>', 'PEM of the TSA certificate chain, to check an RFC 3161 timestamp the proof carries')
    .option('--nostr-pubkey <hex>', "the ledger's Nostr publisher key (64 hex), to check the Nostr anchor event the proof carries (without it the publisher is not checked)")
    .option('--receipt <id>', "the receipt the file must prove: fail (leaf_is_record) unless the leaf is that receipt's ReceiptRecorded event")
    .option('--position <n>', 'the ledger position the file must prove: fail (leaf_is_record) unless the leaf is the event at that position', wholeNumber(1, 'a ledger position'))
    .addHelpText('after', '\nWithout --receipt or --position the proof shows that SOME event is in the log: say which record you expect.\nExit codes: 0 verified; 1 a check failed (each failing check is named); 2 usage error, or a file that cannot be read or is not a proof file.')
    .action(async (file: string, opts: VerifyProofOptions) => {
      ctx.exitCode = await verifyProofCommand(file, opts, ctx.io);
    });
  policyOptions(
    log
      .command('monitor')
      .description("check the log's checkpoint is signed and consistent with the one saved in FILE, then save it")
      .option('--url <base>', 'the ledger, e.g. https://ledger.example.com')
      .option('--tiles <url>', 'read a C2SP tlog-tiles copy instead of the JSON API: its prefix (the static copy, or the ledger base); the tiles must give the signed root')
      .option('--state <file>', 'where the last checkpoint seen is kept (created on the first run: trust on first use)')
      .option('--watch <seconds>', 'check again every SECONDS until SIGINT or SIGTERM', wholeNumber(1, 'seconds'))
      .option('--timeout <seconds>', `HTTP timeout (default ${DEFAULT_TIMEOUT_S})`, wholeNumber(1, 'seconds'))
      .option('--check-heads <dir>', 'also check every stream-heads statement saved in DIR against the leaves, as the log grows (see aer1 log check-heads)')
      .option('--key <key>', 'with --check-heads: an auditor API key, to read leaves withheld from the public (default: $AER1_AUDITOR_KEY)'),
  )
    .addHelpText(
      'after',
      `
Exit codes: 0 consistent (or first run, trusted on first use); 1 a fork (same
size with another root, or a consistency proof that fails), a rollback, a bad
signature or a missing witness quorum: both checkpoints are printed and FILE
is not overwritten; 2 usage error, unusable state file, or the log could not be
reached. With --watch: the worst result seen (1 over 2 over 0) when stopped.
From cron:  */10 * * * * aer1 log monitor --url URL --vkey VKEY --state /var/lib/aer1/checkpoint`,
    )
    .action(async (opts: MonitorOptions) => {
      ctx.exitCode = await monitorCommand(opts, ctx.io);
    });
  policyOptions(
    log
      .command('inclusion')
      .description("fetch the log's checkpoint, an inclusion proof and the leaf of one record, and check them")
      .option('--url <base>', 'the ledger, e.g. https://ledger.example.com')
      .option('--tiles <url>', 'read the checkpoint, proof and leaf from a C2SP tlog-tiles copy (its prefix); with --receipt, --url finds the leaf index')
      .option('--receipt <id>', 'the receipt to prove')
      .option('--index <i>', 'the leaf index (ledger position - 1)', wholeNumber(0, 'a leaf index'))
      .option('--timeout <seconds>', `HTTP timeout (default ${DEFAULT_TIMEOUT_S})`, wholeNumber(1, 'seconds')),
  )
    .addHelpText('after', '\nExit codes: 0 included and verified; 1 a check failed, the receipt is not recorded, it is not yet under the checkpoint, or its leaf is not served (withheld, or a format 1/2 leaf whose content was erased: named); 2 usage error or the log could not be reached.')
    .action(async (opts: InclusionOptions) => {
      ctx.exitCode = await inclusionCommand(opts, ctx.io);
    });
  registerCheckHeads(log, ctx);
}
