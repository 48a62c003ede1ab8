/**
 * Stream ids come from these helpers only: `receipt:<id>`, `timeline:<job_id>`,
 * `workflow:<id>`, `plan:<id>`, `coverage:<id>`, `batch:<id>`, `outcome:<id>`, `erasure:<id>`. Receipt and
 * workflow ids are UUIDs, compared case-insensitively, so they are lowercased.
 */
export const streams = {
  receipt: (id: string): string => `receipt:${id.toLowerCase()}`,
  timeline: (jobId: string): string => `timeline:${jobId}`,
  workflow: (workflowId: string): string => `workflow:${workflowId.toLowerCase()}`,
  plan: (planId: string): string => `plan:${planId}`,
  coverage: (reportId: string): string => `coverage:${reportId}`,
  batch: (batchId: string): string => `batch:${batchId}`,
  /** An outcome report (issue 18); outcome ids are UUIDs, lowercased. */
  outcome: (outcomeId: string): string => `outcome:${outcomeId.toLowerCase()}`,
  /** An erasure of payloads (issue 29); erasure ids are UUIDs, lowercased. */
  erasure: (erasureId: string): string => `erasure:${erasureId.toLowerCase()}`,
};
