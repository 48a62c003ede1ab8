/**
 * `aer1 verify-pack`'s file side: the pack file read as a stream of lines
 * and checked by the core's phases (src/core/pack/check.ts), with the
 * verifiers that live outside core handed in: the strict JSON reader, the
 * leaf parser and witness quorum (src/cli/log-proof.ts) and RFC 3161
 * verification (src/timestamp/rfc3161.ts, loaded only when a token is checked).
 */
import { createReadStream } from 'node:fs';
import { checkPack as checkPackLines, PackDeps, PackReport } from '../core/pack/check';
import type * as Rfc3161 from '../timestamp/rfc3161';
import { parseLeaf, quorumCheck, TrustPolicy } from './log-proof';
import { parseJsonBytes } from './input';

export type { PackErrorCode, PackFailure, PackReport } from '../core/pack/check';

/** RFC 3161 verification (pkijs, asn1js), loaded only when a token is checked. */
const rfc3161 = (): Promise<typeof Rfc3161> => import('../timestamp/rfc3161');

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
