/**
 * Test helpers for reading and forging evidence packs (docs/evidence-pack.md)
 * as an operator would: members parsed from the lines, the manifest rebuilt
 * with the server's own writer after a change, leaves read as text.
 */
import type { Response as SaResponse } from 'superagent';
import { PackWriter } from '../../src/core/pack/format';

/** One pack line. */
export type Member = Record<string, unknown> & { member: string };

/** A superagent parser keeping a streamed pack as text. */
export const text = (res: SaResponse, cb: (err: Error | null, body: string) => void): void => {
  let s = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (s += c));
  res.on('end', () => cb(null, s));
};

/** The members of a pack's text, in order. */
export const lines = (body: string): Member[] => body.trimEnd().split('\n').map((l) => JSON.parse(l) as Member);

/** The pack of `members` with its manifest chunks and trailer rebuilt (the old ones dropped). */
export const repack = (members: Member[]): string => {
  const w = new PackWriter();
  let out = '';
  for (const m of members) if (m.member !== 'manifest' && !m.member.startsWith('manifest/')) out += w.member(m);
  return out + w.finish();
};

/** An event member's leaf bytes as text ('' when withheld). */
export const leafText = (m: Member): string => (typeof m.leaf === 'string' ? Buffer.from(m.leaf, 'base64').toString('utf8') : '');

/** Whether `m` is an event member of stream `stream` (its leaf names the stream as a field). */
export const onStream = (m: Member, stream: string): boolean => m.member.startsWith('event/') && leafText(m).includes(`,${JSON.stringify(stream)},`);

/** Whether `m` is a stream-heads statement member. */
export const isStatement = (m: Member): boolean => /^log\/stream-heads(\/\d+)?$/.test(m.member);
