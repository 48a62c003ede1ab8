/**
 * What stays of an event once its payload is erased (issue 29): the data
 * with every content member removed (canonical bytes, tool arguments and
 * results, unsalted hashes of content such as `output_hash` and entry
 * digests, free text), keeping what the read models need to say that the
 * record existed and what the ledger found at ingestion (`verdict`,
 * `reasons`, tool name, provenance class). The `PayloadsErased` event
 * carries it for each erased position, so projections replay an erased
 * event from it. Only these types can be erased; others are
 * {@link ERASABLE_TYPES}-refused.
 */
import { ndjsonTexts, splitJsonArray } from '../json/text';

/** Event types whose payload may be erased. */
export const ERASABLE_TYPES: ReadonlySet<string> = new Set(['ReceiptRecorded', 'TimelineEntryAppended', 'TimelineImported', 'EndpointCommitmentRecorded', 'OutcomeReported', 'PlanRegistered', 'PlanAmended', 'CoverageReportIssued']);

/** Types erased only when named by position: plans and coverage reports are the compliance team's (a job's erasure leaves them). */
export const ERASABLE_BY_POSITION_ONLY: ReadonlySet<string> = new Set(['PlanRegistered', 'PlanAmended', 'CoverageReportIssued']);

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

/** One entry of an erased import: its seq, receipt id, tool, provenance class and close flag (no content). */
export interface RetainedImportEntry {
  seq: number | null;
  receipt_id: string | null;
  tool: string | null;
  provenance_class: string | null;
  close: boolean;
}

/**
 * The retained data of an event of `type` whose data is `data` (parsed):
 * `raw` becomes '' (the read models' mark of erased content), content hashes
 * null. Returns null for a type that cannot be erased.
 */
export function retainedData(type: string, data: unknown): Obj | null {
  const d = obj(data);
  switch (type) {
    case 'ReceiptRecorded':
      return { ...d, raw: '', output_hash: null, erased: true };
    case 'TimelineEntryAppended':
      return { ...d, raw: '', entry_digest: null, erased: true };
    case 'TimelineImported': {
      const raw = typeof d.raw === 'string' ? d.raw : '';
      const texts = (d.format === 'ndjson' ? ndjsonTexts(raw) : splitJsonArray(raw)) ?? [];
      const entries: RetainedImportEntry[] = texts.map((t) => {
        let v: Obj = {};
        try {
          v = obj(JSON.parse(t));
        } catch {
          v = {};
        }
        return {
          seq: typeof v.seq === 'number' && Number.isSafeInteger(v.seq) ? v.seq : null,
          receipt_id: typeof v.id === 'string' ? v.id.toLowerCase() : null,
          tool: typeof v.tool === 'string' ? v.tool : null,
          provenance_class: typeof v.provenance_class === 'string' ? v.provenance_class : null,
          close: v.close === true,
        };
      });
      return { ...d, raw: '', final_entry_digest: null, entries, erased: true };
    }
    case 'EndpointCommitmentRecorded': {
      const { attestation: _a, ...rest } = d;
      return { ...rest, raw: '', erased: true };
    }
    case 'OutcomeReported':
      return { ...d, raw: '', output_hash: '', erased: true };
    case 'PlanRegistered':
    case 'PlanAmended':
      // The plan (title, actions), its unsalted digest and the amendment's free-text reason are content.
      return { plan_id: d.plan_id, version: d.version, subject: d.subject, registered_at: d.registered_at, ...(d.supersedes_version !== undefined ? { supersedes_version: d.supersedes_version } : {}), plan: null, digest: null, reason: null, erased: true };
    case 'CoverageReportIssued': {
      // What it was about, against which plan version, as of where, and its result (the verdict it recorded); its
      // findings, actions and evidence (content and unsalted hashes of it) and its digest are content.
      const r = obj(d.report);
      const plan = obj(r.plan);
      return { report_id: d.report_id, issued_at: d.issued_at, digest: null, report: { subject: r.subject, plan: { plan_id: plan.plan_id ?? null, version: plan.version ?? null }, as_of_position: r.as_of_position, result: r.result }, erased: true };
    }
    default:
      return null;
  }
}
