/**
 * `aer1 verify-pack`'s file side: the pack file read as a stream of lines
 * and checked by the core's phases (src/core/pack/check.ts), with the
 * verifiers handed in: the CLI's strict JSON reader (src/cli/input.ts), the
 * leaf parser (src/core/ledger/leaf.ts), witness quorum
 * (src/core/tlog/quorum.ts) and RFC 3161 verification (src/core/timestamp,
 * loaded only when a token is checked).
 */
import { createReadStream } from 'node:fs';
import { checkPack as checkPackLines, PackDeps, PackReport } from '../core/pack/check';
import type * as Rfc3161 from '../core/timestamp';
import { parseLeaf, withPayload } from '../core/ledger/leaf';
import { quorumCheck, TrustPolicy } from '../core/tlog/quorum';
import { parseJsonBytes } from './input';

export type { PackErrorCode, PackFailure, PackReport } from '../core/pack/check';

/** RFC 3161 verification (pkijs, asn1js), loaded only when a token is checked. */
const rfc3161 = (): Promise<typeof Rfc3161> => import('../core/timestamp');

/**
 * Lines of a file as Buffers (split on LF only), streamed. Linear in the
 * file's size however long a line is: each chunk is scanned once, and the
 * pieces of an unfinished line are kept as a list and joined once, when its
 * LF (or the end of the file) arrives.
 */
export async function* fileLines(file: string): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  for await (const data of createReadStream(file)) {
    const chunk = data as Buffer;
    let from = 0;
    let at: number;
    while ((at = chunk.indexOf(0x0a, from)) >= 0) {
      const piece = chunk.subarray(from, at);
      yield pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      from = at + 1;
    }
    if (from < chunk.length) pending.push(chunk.subarray(from));
  }
  if (pending.length) yield Buffer.concat(pending);
}

const deps: PackDeps = {
  parseJson: parseJsonBytes,
  parseLeaf,
  withPayload,
  quorumCheck: (note, policy) => quorumCheck(note, policy as TrustPolicy),
  timestamp: rfc3161,
};

/** Check the pack in `file` against `policy` (src/core/pack/check.ts). Throws only when the file cannot be read. */
export function checkPack(file: string, policy: TrustPolicy): Promise<PackReport> {
  return checkPackLines(fileLines(file), policy, deps);
}
