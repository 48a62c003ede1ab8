/** The events of `plan:<plan_id>` and `coverage:<report_id>` streams. */
import type { Event } from '../ledger/event';
import { NormalizedPlan, PlanSubject } from '../core/coverage/plan';
import { CoverageReportContent } from '../core/coverage/reconcile';

/** Data of `PlanRegistered` (version 1) and `PlanAmended` (version n+1), stream `plan:<plan_id>`. */
export interface PlanVersionData {
  plan_id: string;
  version: number;
  subject: PlanSubject;
  /** The normalized plan: what `digest` covers. Null in the retained data of an erased version (issue 29). */
  plan: NormalizedPlan | null;
  /** SHA-256 over the canonical JSON of `plan`; null when erased. */
  digest: string | null;
  /** Server time of registration. */
  registered_at: string;
  /** Amendments: the version superseded and an optional note. */
  supersedes_version?: number;
  reason?: string | null;
  /** Set in the retained data of an erased version (src/core/ledger/retained.ts). */
  erased?: true;
}

/** Data of `CoverageReportIssued`, stream `coverage:<report_id>`. */
export interface CoverageReportIssuedData {
  report_id: string;
  issued_at: string;
  /** SHA-256 over the canonical JSON of `report` (report_id and issued_at excluded); null when erased. */
  digest: string | null;
  /** When erased (issue 29), only `subject`, `plan` (id, version), `as_of_position` and `result` are retained. */
  report: CoverageReportContent;
  /** Set in the retained data of an erased report (src/core/ledger/retained.ts). */
  erased?: true;
}

export type PlanRegistered = Event<'PlanRegistered', PlanVersionData>;
export type PlanAmended = Event<'PlanAmended', PlanVersionData>;
/** Every event of a plan stream. */
export type PlanEvent = PlanRegistered | PlanAmended;
export const PLAN_EVENT_TYPES: readonly PlanEvent['type'][] = ['PlanRegistered', 'PlanAmended'];

export type CoverageReportIssued = Event<'CoverageReportIssued', CoverageReportIssuedData>;
/** Every event of a coverage report stream. */
export type CoverageEvent = CoverageReportIssued;
export const COVERAGE_EVENT_TYPES: readonly CoverageEvent['type'][] = ['CoverageReportIssued'];
