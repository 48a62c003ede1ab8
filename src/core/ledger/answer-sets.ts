/**
 * Answer sets (issue 30, "the statement must cover the set of outcomes that
 * answer the subject's receipts"). An outcome report is a stream of its own
 * (`outcome:<id>`, one event), so no chain links the outcomes answering one
 * call; a stream-heads statement covers them through a named set instead:
 *
 * ```
 * answers:<receipt id>:timeline:<job id>      outcomes of job <job id> answering the receipt
 * answers:<receipt id>:workflow:<workflow id> outcomes naming the workflow answering the receipt
 * ```
 *
 * Its members are the `OutcomeReported` events whose leaf names that
 * receipt (`receipt_id`, lowercase UUID) and a job id the subject owns (the
 * job id exactly; a workflow id case-insensitively: `outcomeNamesSubject`,
 * issue 26), in ledger order. The set's line says its newest member as of
 * the size (position 0: none), and a statement naming a set also names the
 * `outcome:<id>` stream of every member: a set is claimed whole, so leaving
 * one of its outcomes out of the statement is as false as a wrong head.
 */
import { isUuid } from '../aer1';
import { outcomeNamesSubject } from '../coverage/outcomes';

/** The prefix of an answer set's id. */
export const ANSWERS_PREFIX = 'answers:';

/** An answer set: the receipt answered and the subject whose outcomes count. */
export interface AnswerSet {
  /** Lowercase UUID. */
  readonly receiptId: string;
  readonly subject: { readonly kind: 'job' | 'workflow'; readonly id: string };
}

/** The id of the answer set of `receiptId` for a job or workflow (workflow ids and receipt ids lowercased). */
export function answersStreamId(receiptId: string, subject: { kind: 'job' | 'workflow'; id: string }): string {
  const home = subject.kind === 'job' ? `timeline:${subject.id}` : `workflow:${subject.id.toLowerCase()}`;
  return `${ANSWERS_PREFIX}${receiptId.toLowerCase()}:${home}`;
}

/** The set an id names, or null when `id` is no answer set's id (not `answers:`, or its receipt id not a lowercase UUID, or no `timeline:`/`workflow:` subject). */
export function parseAnswersStreamId(id: string): AnswerSet | null {
  if (!id.startsWith(ANSWERS_PREFIX)) return null;
  const rest = id.slice(ANSWERS_PREFIX.length);
  const receiptId = rest.slice(0, 36);
  if (!isUuid(receiptId) || receiptId !== receiptId.toLowerCase() || rest[36] !== ':') return null;
  const home = rest.slice(37);
  if (home.startsWith('timeline:') && home.length > 'timeline:'.length) return { receiptId, subject: { kind: 'job', id: home.slice('timeline:'.length) } };
  const w = home.slice('workflow:'.length);
  if (home.startsWith('workflow:') && isUuid(w) && w === w.toLowerCase()) return { receiptId, subject: { kind: 'workflow', id: w } };
  return null;
}

/** Whether an event (its type and the `receipt_id` and `job_id` its leaf or data names) is a member of `set`. */
export function inAnswerSet(set: AnswerSet, type: string, receiptId: unknown, jobId: unknown): boolean {
  return type === 'OutcomeReported' && typeof receiptId === 'string' && receiptId.toLowerCase() === set.receiptId && typeof jobId === 'string' && outcomeNamesSubject(jobId, set.subject);
}

/**
 * The `receipt_id`, `job_id` and `outcome_id` an `OutcomeReported` leaf names:
 * a format 3 leaf's public ids, or a format 1/2 leaf's data. Null for any other event.
 */
export function outcomeIdsOf(e: { type: string; ids?: Readonly<Record<string, unknown>> | null; data?: string | null }): { receipt_id: unknown; job_id: unknown; outcome_id: unknown } | null {
  if (e.type !== 'OutcomeReported') return null;
  let d: Record<string, unknown> | null = e.ids ? (e.ids as Record<string, unknown>) : null;
  if (!d && typeof e.data === 'string') {
    try {
      const v = JSON.parse(e.data) as unknown;
      d = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      d = null;
    }
  }
  return d ? { receipt_id: d.receipt_id, job_id: d.job_id, outcome_id: d.outcome_id } : null;
}
