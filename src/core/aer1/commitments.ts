/**
 * Every endpoint commitment of a job, judged together (rev 09 article; S7.3).
 *
 * One commitment is checked by {@link checkCommitment}. Several recorded for
 * one job are judged here, by the one function the ledger's verifier, its
 * job page, its coverage reports and the `aer1` CLI all use:
 *
 * - a commitment that counts MORE entries than are visible proves truncation;
 * - one that counts as many entries but names another final digest proves the
 *   final entry was substituted;
 * - one that counts FEWER entries (an earlier checkpoint) is consistent when
 *   its digest is the recomputed digest of that entry of the visible chain,
 *   and proves an earlier entry was substituted when it is not;
 * - a finding of any commitment is never hidden by another commitment that
 *   binds: truncation is excluded only when at least one commitment binds and
 *   none contradicts the visible timeline.
 *
 * Commitments that name another job or are malformed say nothing about this
 * timeline: they never bind and never contradict.
 */
import { TimelineResult } from './chain';
import { checkCommitment, commitmentFormatProblems, CommitmentResult } from './commitment';
import { ZERO_DIGEST } from './identifiers';
import { describe, isObject, JsonObject } from './result';
import { Attestation, AttestationKind, selfAsserted } from './attestation';

/** A commitment as recorded for a job (or given on the command line). */
export interface RecordedCommitment {
  /** The ledger's id of the record; null offline. */
  id: string | null;
  /** The commitment `{job_id, final_entry_digest, entry_count, published_at, ...}`. */
  value: unknown;
  /** An envelope `{commitment, witness, ...}` it came in, for witness metadata. */
  envelope?: JsonObject;
  /** Ledger position of its record; null offline. */
  position?: number | null;
  recorded_at?: string | null;
  /** Who stands behind it, judged by the caller ({@link judgeAttestation}); absent: self-asserted by an unknown poster. */
  attestation?: Attestation;
}

/**
 * What one commitment says about the visible timeline.
 * Contradictions: `truncation_detected`, `final_entry_substituted`,
 * `entry_substituted`. Neutral: `earlier_checkpoint`, `non_binding`,
 * `other_job`, `invalid_commitment`.
 */
export type CommitmentOutcome =
  | 'binding'
  | 'truncation_detected'
  | 'final_entry_substituted'
  | 'entry_substituted'
  | 'earlier_checkpoint'
  | 'non_binding'
  | 'other_job'
  | 'invalid_commitment';

/** The contradicting outcomes, most severe first. */
export const CONTRADICTIONS = ['truncation_detected', 'final_entry_substituted', 'entry_substituted'] as const;
export type Contradiction = (typeof CONTRADICTIONS)[number];

/** The status of all commitments of a job together. */
export type CommitmentsStatus = 'binding' | Contradiction | 'non_binding' | 'absent';

export interface AssessedCommitment {
  /** 0-based place in the list given. */
  index: number;
  id: string | null;
  position: number | null;
  recorded_at: string | null;
  outcome: CommitmentOutcome;
  binding: boolean;
  contradicts: boolean;
  /** Entries the commitment counts beyond the visible ones (truncation only). */
  missing_entries: number | null;
  /** For an earlier checkpoint: the recomputed digest of that entry of the visible chain (null: not known here). */
  chain_digest_at_count: string | null;
  /** One sentence: what this commitment shows. */
  detail: string;
  /** The commitment's own check against the visible timeline ({@link checkCommitment}). */
  check: CommitmentResult;
  /** Who stands behind it: `ledger_issued`, `attested_by` or `self_asserted` (witness metadata of a self-asserted one is a claim). */
  attestation: Attestation;
}

export interface CommitmentFinding {
  code: Contradiction;
  index: number;
  commitment_id: string | null;
  position: number | null;
  message: string;
}

export interface CommitmentsAssessment {
  status: CommitmentsStatus;
  /** True only when at least one commitment binds and none contradicts. */
  truncation_excluded: boolean;
  /**
   * Who stands behind the binding commitments: `ledger_issued` or
   * `attested_by` when one of them is (ledger-issued preferred), else
   * `self_asserted`; null when none binds. Only a binding commitment that is
   * not self-asserted makes a coverage report's endpoint independent of the producer.
   */
  binding_attestation: AttestationKind | null;
  /** Ids (or `#n` when offline) of the binding commitments. */
  binding: string[];
  /** One finding per contradicting commitment, in the order given. */
  findings: CommitmentFinding[];
  commitments: AssessedCommitment[];
}

/** How a commitment is named in messages: its id, else `#n` (1-based). */
export function commitmentLabel(c: { id: string | null; index: number }): string {
  return c.id ?? `#${c.index + 1}`;
}

/**
 * The entry counts below the visible count that the given commitments name:
 * the entries whose recomputed digests {@link assessCommitments} needs to
 * judge earlier checkpoints (count 0 is the genesis zeros and is not listed).
 */
export function earlierCounts(timeline: TimelineResult, commitments: readonly RecordedCommitment[]): number[] {
  const out = new Set<number>();
  for (const c of commitments) {
    const v = c.value;
    if (isObject(v) && Number.isSafeInteger(v.entry_count) && (v.entry_count as number) > 0 && (v.entry_count as number) < timeline.entry_count) out.add(v.entry_count as number);
  }
  return [...out].sort((a, b) => a - b);
}

/**
 * Judge every commitment recorded for a job against its visible timeline.
 *
 * @param timeline the visible timeline, verified by the core (S7).
 * @param commitments every commitment recorded for the job (as of the
 *   position judged), in record order.
 * @param opts.job_id the job the timeline belongs to (defaults to the
 *   timeline's own job_id; give it when the timeline may be empty).
 * @param opts.digest_at recomputed S7.1 digests of entries 1..n-1 of the
 *   visible chain by their 1-based place (see {@link earlierCounts}); an
 *   earlier checkpoint whose entry is missing here is `earlier_checkpoint`
 *   with `chain_digest_at_count: null` (not compared).
 */
export function assessCommitments(
  timeline: TimelineResult,
  commitments: readonly RecordedCommitment[],
  opts: { job_id?: string | null; digest_at?: ReadonlyMap<number, string | null> } = {},
): CommitmentsAssessment {
  const job = opts.job_id ?? timeline.job_id;
  const n = timeline.entry_count;
  const assessed = commitments.map((rc, index): AssessedCommitment => {
    const check = checkCommitment(timeline, rc.value, rc.envelope);
    const attestation = rc.attestation ?? selfAsserted(null);
    const base = { index, id: rc.id, position: rc.position ?? null, recorded_at: rc.recorded_at ?? null, check, attestation, missing_entries: null, chain_digest_at_count: null };
    const make = (outcome: CommitmentOutcome, detail: string, extra: Partial<AssessedCommitment> = {}): AssessedCommitment => ({
      ...base,
      outcome,
      binding: outcome === 'binding',
      contradicts: (CONTRADICTIONS as readonly string[]).includes(outcome),
      detail,
      ...extra,
    });
    const problems = commitmentFormatProblems(rc.value);
    if (problems.length > 0) return make('invalid_commitment', `the commitment is malformed (reading 9): ${problems.join('; ')}`);
    const c = rc.value as JsonObject;
    if (c.job_id !== job) return make('other_job', `the commitment names another job (${describe(c.job_id)}): it says nothing about this timeline`);
    const count = c.entry_count as number;
    const digest = c.final_entry_digest as string;
    if (count > n) {
      return make('truncation_detected', `truncation detected: the commitment counts ${count} entries, ${n} are visible (${count - n} missing from the end or rebuilt away)`, { missing_entries: count - n });
    }
    if (count === n) {
      if (check.binding) {
        return make('binding', `binds the visible timeline: ${n} entries, final entry digest ${digest}, published at ${describe(c.published_at)}; ${whoStandsBehind(attestation, check.witness)}`);
      }
      if (timeline.final_entry_digest !== null && digest !== timeline.final_entry_digest) {
        return make('final_entry_substituted', `final entry substituted: the commitment counts ${n} entries as visible, but names final entry digest ${digest}, recomputed ${timeline.final_entry_digest}`);
      }
      const why = timeline.erased && timeline.reasons.length === 0 ? `${timeline.erased.entries} of ${n} entries were erased (issue 29), so the chain cannot be re-checked whole` : `the timeline does not verify under -07 (verdict ${timeline.verdict})`;
      return make('non_binding', `count and final digest ${timeline.final_entry_digest === null ? 'cannot be compared (the last entry has no recomputable digest)' : 'match'}, but ${why}: no commitment binds it`);
    }
    const at = count === 0 ? ZERO_DIGEST : (opts.digest_at?.get(count) ?? null);
    if (at === null) {
      return make('earlier_checkpoint', `an earlier checkpoint (${count} of ${n} visible entries); entry ${count} of the chain was not compared: it binds neither the visible end nor, here, its own prefix`);
    }
    if (at !== digest) {
      return make('entry_substituted', `entry ${count} substituted: the commitment of an earlier checkpoint (${count} of ${n} visible entries) names digest ${digest}, the visible chain has ${at}`, { chain_digest_at_count: at });
    }
    return make('earlier_checkpoint', `an earlier checkpoint consistent with the visible chain (entry ${count} of ${n} has the committed digest); entries after it are not bound by it`, { chain_digest_at_count: at });
  });
  const contradicting = assessed.filter((a) => a.contradicts);
  const binding = assessed.filter((a) => a.binding);
  let status: CommitmentsStatus;
  if (contradicting.length > 0) status = CONTRADICTIONS.find((k) => contradicting.some((a) => a.outcome === k))!;
  else if (binding.length > 0) status = 'binding';
  else status = assessed.length > 0 ? 'non_binding' : 'absent';
  const kinds = binding.map((a) => a.attestation.kind);
  const bindingAttestation: AttestationKind | null = kinds.length === 0 ? null : kinds.includes('ledger_issued') ? 'ledger_issued' : kinds.includes('attested_by') ? 'attested_by' : 'self_asserted';
  return {
    status,
    truncation_excluded: binding.length > 0 && contradicting.length === 0,
    binding_attestation: bindingAttestation,
    binding: binding.map(commitmentLabel),
    findings: contradicting.map((a) => ({ code: a.outcome as Contradiction, index: a.index, commitment_id: a.id, position: a.position, message: `commitment ${commitmentLabel(a)}: ${a.detail}` })),
    commitments: assessed,
  };
}

/**
 * Who stands behind a commitment, in words: the attestation, and for a
 * self-asserted one any witness it names, as the poster's claim only.
 */
export function whoStandsBehind(a: Attestation, witness: Record<string, unknown> | null): string {
  if (a.kind !== 'self_asserted') return a.detail;
  const claim = witness && typeof witness.witness === 'string' ? ` (it names witness ${describe(witness.witness)}: the poster's claim, not checked)` : '';
  return `${a.detail.replace(/; any witness it names is the poster's claim, not checked$/, '')}${claim}`;
}

/**
 * The commitment that decides the assessment, for views that show one:
 * the first contradicting one, else the latest binding one (the latest
 * ledger-issued, else attested, else self-asserted one), else the latest.
 */
export function decidingCommitment(a: CommitmentsAssessment): AssessedCommitment | null {
  const list = a.commitments;
  const latestBinding = (kind?: AttestationKind) => [...list].reverse().find((c) => c.binding && (kind === undefined || c.attestation.kind === kind));
  // Among binding ones, the one with the strongest attestation decides (ledger-issued, then attested, then self-asserted).
  return list.find((c) => c.contradicts) ?? latestBinding('ledger_issued') ?? latestBinding('attested_by') ?? latestBinding() ?? list[list.length - 1] ?? null;
}

/**
 * The one overall answer for a job (Honest answers issue): the S7 chain
 * verdict and every endpoint commitment judged together (rev 09).
 * - `invalid` / `historical`: the chain verdict (S7, S7.4), whatever the commitments say;
 * - `truncation_detected`, `final_entry_substituted`, `entry_substituted`: a recorded commitment contradicts the visible timeline;
 * - `truncation_not_excluded`: the chain verifies but no commitment binds it (S7.3);
 * - `clean`: the chain verifies, a commitment binds it and none contradicts it.
 * Only `clean` is a success for a machine verifier (S6).
 */
export type JobAssessment = 'clean' | Contradiction | 'truncation_not_excluded' | 'invalid' | 'historical' | 'partly_erased';

/** {@link JobAssessment} of a chain `verdict` and its commitments' judgement (see {@link assessCommitments}). */
export function jobAssessment(verdict: string, commitments: Pick<CommitmentsAssessment, 'status' | 'truncation_excluded'>): JobAssessment {
  if (verdict === 'historical') return 'historical';
  const s = commitments.status;
  // Issue 29: entries erased, every link still checkable holds; a contradicting commitment still leads.
  if (verdict === 'partly_erased') return s === 'truncation_detected' || s === 'final_entry_substituted' || s === 'entry_substituted' ? s : 'partly_erased';
  if (verdict !== 'valid') return 'invalid';
  if (s === 'truncation_detected' || s === 'final_entry_substituted' || s === 'entry_substituted') return s;
  return commitments.truncation_excluded ? 'clean' : 'truncation_not_excluded';
}

/** A headline for each {@link JobAssessment}, in words (pages, the CLI, batch summaries). */
export const JOB_ASSESSMENT_HEADLINE: Readonly<Record<JobAssessment, string>> = {
  clean: 'CLEAN: the chain verifies and a binding endpoint commitment excludes truncation',
  truncation_detected: 'TRUNCATION DETECTED: a recorded endpoint commitment counts more entries than are visible',
  final_entry_substituted: 'FINAL ENTRY SUBSTITUTED: a recorded endpoint commitment names another final entry',
  entry_substituted: 'ENTRY SUBSTITUTED: a recorded endpoint commitment names another digest for an earlier entry',
  truncation_not_excluded: 'TRUNCATION NOT EXCLUDED: the chain verifies, but no endpoint commitment binds it (S7.3)',
  invalid: 'INVALID: the chain does not verify (S7)',
  historical: 'HISTORICAL: the chain follows the -06 construction (S7.4), never valid',
  partly_erased: 'PARTLY ERASED: some entries\' content was erased (issue 29); every link still checkable holds, the links that join an erased entry cannot be re-checked',
};

/**
 * The verdict a ledger answers for a chain result: `partly_erased` when
 * entries were erased (issue 29) and nothing else fails, else the core's
 * verdict (`invalid` wins over erasure).
 */
export function chainVerdict(result: Pick<TimelineResult, 'verdict' | 'reasons' | 'erased'>): string {
  return result.erased && result.verdict === 'incomplete' && result.reasons.length === 0 ? 'partly_erased' : result.verdict;
}
