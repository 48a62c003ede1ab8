/**
 * Reading a pack, one line a member, in one pass: each line goes to its
 * phase as it is read (the manifest, the checkpoint, the events, the record
 * members), so a pack of any size is checked with its records in memory and
 * its leaves parsed once.
 */
import { isObject } from '../aer1';
import { CheckpointState, checkpointMember, nostrMember, timestampMember, vkeyMember } from './checkpoint';
import { eventMember, PackEvents } from './events';
import { memberHash, PACK_FORMAT } from './format';
import { chunkRead, ManifestState, memberRead } from './manifest';
import { PackRecords, recordMember } from './members';
import { PackDeps, PackPolicy, Tally } from './result';
import { PackLinks } from './streams';

type Obj = Record<string, unknown>;

/** Everything read from a pack's lines. */
export interface PackRead {
  /** false: not a pack at all (no header, manifest or event member). */
  isPack: boolean;
  header: Obj | null;
  checkpoint: CheckpointState;
  manifest: ManifestState;
  events: PackEvents;
  /** What each event's leaf says of its stream (issue 30). */
  links: PackLinks;
  /** The `log/stream-heads` members, in file order. */
  statements: { member: string; note: string }[];
  records: PackRecords;
}

/** `log/stream-heads`, then `log/stream-heads/2`, ... (format.ts `memberName.streamHeads`). */
const STREAM_HEADS = /^log\/stream-heads(\/[1-9][0-9]{0,5})?$/;

/**
 * Read the pack's `lines` (LF-separated, without the LF), checking each
 * member as its phase does. Stops early only when the checkpoint does not
 * verify under --vkey (`checkpoint.stopped`).
 */
export async function readPack(lines: AsyncIterable<Buffer>, policy: PackPolicy, deps: PackDeps, t: Tally): Promise<PackRead> {
  const r: PackRead = { isPack: false, header: null, checkpoint: new CheckpointState(), manifest: new ManifestState(), events: new Map(), links: new Map(), statements: [], records: new PackRecords() };
  const names = new Set<string>();
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (line.length === 0) {
      t.fail(`line ${lineNo}`, 'format', 'an empty line (a pack has one member on every line)');
      continue;
    }
    const parsed = deps.parseJson(line);
    const m = parsed.ok && isObject(parsed.value) ? (parsed.value as Obj) : null;
    const name = m && typeof m.member === 'string' ? m.member : null;
    if (m === null || name === null) {
      t.fail(`line ${lineNo}`, 'format', parsed.ok ? 'not a member object {"member": ...}' : `not JSON (${parsed.detail}): the line was altered`);
      if (!r.manifest.trailer) r.manifest.pending.push([`line ${lineNo}`, memberHash(line)]);
      continue;
    }
    r.isPack ||= name === 'header' || name === 'manifest' || name.startsWith('event/');
    if (r.manifest.trailer) {
      t.fail(name, 'manifest', `line ${lineNo} comes after the final manifest`);
      continue;
    }
    if (name === 'manifest') {
      r.manifest.trailer = m;
      continue;
    }
    if (name.startsWith('manifest/')) {
      t.counts.manifest_chunks++;
      chunkRead(r.manifest, name, m, line, t);
      continue;
    }
    t.counts.members++;
    if (names.has(name)) t.fail(name, 'format', 'this member name appears twice');
    names.add(name);
    memberRead(r.manifest, name, line);
    if (lineNo === 1 && name !== 'header') t.fail(name, 'format', 'the first line is not the header');

    if (name === 'header') t.counts.header++;
    else if (name === 'log/vkey' || name === 'log/checkpoint' || name === 'log/timestamp' || name === 'log/nostr' || STREAM_HEADS.test(name)) t.counts.log++;
    if (name === 'header') {
      r.header = m;
      if (m.format !== PACK_FORMAT) t.fail(name, 'format', `format is ${JSON.stringify(m.format)}, not ${PACK_FORMAT}`);
    } else if (name === 'log/vkey') vkeyMember(r.checkpoint, name, m, policy, t);
    else if (name === 'log/checkpoint') {
      checkpointMember(r.checkpoint, name, m, policy, deps, t);
      if (r.checkpoint.stopped !== null) break;
    } else if (name === 'log/timestamp') await timestampMember(r.checkpoint, name, m, policy, deps, t);
    else if (name === 'log/nostr') nostrMember(r.checkpoint, name, m, policy, t);
    else if (name.startsWith('event/')) eventMember(r.events, name, m, r.checkpoint.cp, deps, t, r.links);
    else if (STREAM_HEADS.test(name)) {
      if (typeof m.note === 'string') r.statements.push({ member: name, note: m.note });
      else t.fail(name, 'stream_heads', 'the member holds no "note" string');
    }
    else if (!recordMember(r.records, name, m, t)) {
      t.counts.other++;
      t.fail(name, 'format', 'an unknown member');
    }
  }
  return r;
}
