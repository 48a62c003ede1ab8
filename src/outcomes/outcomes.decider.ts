/**
 * The rule of an outcome stream (issue 18): an outcome is recorded once and
 * never altered; a later observation is a new outcome with its own id.
 * Pure: the state read in the write transaction in, the events or a typed
 * 409 out.
 */
import { ConflictError } from '../common/errors';
import type { OutcomeReported, OutcomeReportedData } from './outcomes.events';
import type { OutcomeRow } from './outcomes.repository';

export type ReportDecision = { existing: OutcomeRow } | { events: [OutcomeReported] };

/**
 * Decide recording `data` given what is recorded under its id. The same
 * bytes again answer the record; other bytes are 409 `outcome_id_conflict`
 * (an outcome is never edited: report a new one, which supersedes it).
 */
export function decideReport(existing: OutcomeRow | null, data: OutcomeReportedData): ReportDecision {
  if (!existing) return { events: [{ type: 'OutcomeReported', data }] };
  if (existing.raw === data.raw) return { existing };
  const id = data.outcome_id.toLowerCase();
  throw new ConflictError('outcome_id_conflict', `outcome ${id} is already recorded with different bytes; outcomes are never edited: report a later observation as a new outcome, which supersedes this one`, { outcome_id: id });
}
