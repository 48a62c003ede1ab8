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
import { parseLeaf } from '../core/ledger/leaf';
import { quorumCheck, TrustPolicy } from '../core/tlog/quorum';
import { parseJsonBytes } from './input';

export type { PackErrorCode, PackFailure, PackReport } from '../core/pack/check';

/** RFC 3161 verification (pkijs, asn1js), loaded only when a token is checked. */
const rfc3161 = (): Promise<typeof Rfc3161> => import('../core/timestamp');

/** Lines of a file as Buffers (split on LF only), streamed. */
export async function* fileLines(file: string): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file)) {
    let buf = rest.length ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    let at: number;
    while ((at = buf.indexOf(0x0a)) >= 0) {
      yield buf.subarray(0, at);
      buf = buf.subarray(at + 1);
    }
    rest = Buffer.from(buf);
  }
  if (rest.length) yield rest;
}

const deps: PackDeps = {
  parseJson: parseJsonBytes,
  parseLeaf,
  quorumCheck: (note, policy) => quorumCheck(note, policy as TrustPolicy),
  timestamp: rfc3161,
};

/** Check the pack in `file` against `policy` (src/core/pack/check.ts). Throws only when the file cannot be read. */
export function checkPack(file: string, policy: TrustPolicy): Promise<PackReport> {
  return checkPackLines(fileLines(file), policy, deps);
}
