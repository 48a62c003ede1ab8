/** What a verification batch names and records. */
export type TargetKind = 'receipt' | 'job' | 'workflow';
export const TARGET_KINDS: readonly TargetKind[] = ['receipt', 'job', 'workflow'];

export interface Target {
  kind: TargetKind;
  id: string;
}

/** A target with its index in the batch (results are listed in this order). */
export interface SeqTarget extends Target {
  seq: number;
}

/** Data of a BullMQ job (and of one in-process step): one chunk of a batch. */
export interface ChunkData {
  batch_id: string;
  chunk_index: number;
  targets: SeqTarget[];
}

/** One verification result. */
export interface ResultRecord {
  kind: TargetKind;
  id: string;
  seq: number;
  verdict: string;
  reasons: string[];
  verified_at: string;
}

/** Split a target list into chunks, keeping each target's index. */
export function chunkTargets(batchId: string, targets: Target[], size: number): ChunkData[] {
  const chunks: ChunkData[] = [];
  for (let i = 0, c = 0; i < targets.length; i += size, c++) {
    chunks.push({ batch_id: batchId, chunk_index: c, targets: targets.slice(i, i + size).map((t, j) => ({ ...t, seq: i + j })) });
  }
  return chunks;
}

/** BullMQ job id of a chunk: deterministic, so adding the same chunk twice is a no-op (':' is not allowed in custom ids). */
export function chunkJobId(batchId: string, chunkIndex: number): string {
  return `${batchId}_${chunkIndex}`;
}
