/**
 * docs/event-formats.md cannot drift from the code: its worked format 3
 * example (LEAF, SALT, PAYLOAD and the three `sha256sum` answers) is parsed
 * from the doc and recomputed with the ledger's own functions, the leaf is
 * rebuilt from the fields the ledger would store for that payload, and the
 * public ids table equals src/core/ledger/public-ids.ts. Pure: reads a file.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../../src/core/aer1';
import { eventHash, eventHashInput, payloadCommitment, publicIdsText } from '../../src/core/ledger/event-hash';
import { parseLeaf, withPayload } from '../../src/core/ledger/leaf';
import { PUBLIC_IDS, publicIdsOf } from '../../src/core/ledger/public-ids';

const DOC = readFileSync(join(__dirname, '../../docs/event-formats.md'), 'utf8');

/** The fenced block after the `event-formats-example` marker. */
function exampleBlock(): string {
  const at = DOC.indexOf('<!-- event-formats-example');
  expect(at).toBeGreaterThan(0);
  const m = /```sh\n([\s\S]*?)\n```/.exec(DOC.slice(at));
  if (!m) throw new Error('no sh block after the event-formats-example marker');
  return m[1];
}

/** A shell assignment of the block: `NAME='...'` (single-quoted, taken literally, as the shell does) or `NAME=word`. */
function assigned(block: string, name: string): string {
  const m = new RegExp(`^${name}=(?:'([^']*)'|(\\S+))$`, 'm').exec(block);
  if (!m) throw new Error(`no ${name}= in the example`);
  return m[1] ?? m[2];
}

/** The `# <64 hex>  -` answer printed after the command line that contains `command`. */
function answerAfter(block: string, command: string): string {
  const lines = block.split('\n');
  const i = lines.findIndex((l) => !l.startsWith('#') && l.includes(command));
  expect(i).toBeGreaterThanOrEqual(0);
  const m = /^# ([0-9a-f]{64}) {2}-$/.exec(lines[i + 1] ?? '');
  if (!m) throw new Error(`no sha256sum answer after ${command}`);
  return m[1];
}

describe('docs/event-formats.md', () => {
  const block = exampleBlock();
  const LEAF = assigned(block, 'LEAF');
  const SALT = assigned(block, 'SALT');
  const PAYLOAD = assigned(block, 'PAYLOAD');

  it('the example leaf is a canonical format 3 leaf, with no content of its payload', () => {
    const e = parseLeaf(Buffer.from(LEAF, 'utf8'));
    expect(e).toMatchObject({ format: 3, position: 42, stream_position: 1, stream_prev: 0, type: 'ReceiptRecorded', key_name: 'crm-agent', data: null });
    const data = JSON.parse(PAYLOAD) as { id: string; raw: string; output_hash: string };
    expect(e.ids).toEqual({ receipt_id: data.id });
    const raw = JSON.parse(data.raw) as { canonical_bytes: string };
    expect(LEAF).not.toContain(raw.canonical_bytes);
    expect(LEAF).not.toContain(data.output_hash.slice(7));
    expect(Buffer.from(raw.canonical_bytes, 'base64').toString('utf8')).toContain('Ada Lovelace');
  });

  it('the three sha256sum answers are the event hash, the payload commitment and the RFC 6962 leaf hash the code computes', () => {
    expect(answerAfter(block, `printf '%s' "$LEAF" | sha256sum`)).toBe(sha256Hex(LEAF));
    const salt = Buffer.from(SALT, 'hex');
    expect(salt.length).toBe(32);
    const commitment = payloadCommitment(salt, PAYLOAD);
    expect('sha256:' + answerAfter(block, 'xxd -r -p')).toBe(commitment);
    expect(JSON.parse(LEAF)[11]).toBe(commitment);
    const leafHash = createHash('sha256').update(Buffer.concat([Buffer.from([0]), Buffer.from(LEAF, 'utf8')])).digest('hex');
    expect(answerAfter(block, `printf '\\000'`)).toBe(leafHash);
    // The payload and salt open the leaf's commitment; a changed byte does not.
    const e = parseLeaf(Buffer.from(LEAF, 'utf8'));
    expect(withPayload(e, Buffer.from(PAYLOAD, 'utf8'), salt).ok).toBe(true);
    expect(withPayload(e, Buffer.from(PAYLOAD.replace('crm.lookup', 'crm.lookuq'), 'utf8'), salt)).toMatchObject({ ok: false });
  });

  it('the leaf is what the ledger writes for this payload: public ids from the data, the commitment from salt and payload', () => {
    const a = JSON.parse(LEAF) as unknown[];
    const stored = {
      position: a[1] as number,
      prev_hash: a[2] as string,
      recorded_at: a[3] as string,
      stream_id: a[4] as string,
      stream_position: a[5] as number,
      stream_prev: a[6] as number,
      type: a[7] as string,
      key_id: a[8] as string,
      key_name: a[9] as string,
      format: 3,
      data: PAYLOAD,
      public_ids: publicIdsText(publicIdsOf(a[7] as string, JSON.parse(PAYLOAD))),
      payload_commitment: payloadCommitment(Buffer.from(SALT, 'hex'), PAYLOAD),
      payload_salt: SALT,
    };
    expect(stored.stream_id).toBe(`receipt:${(JSON.parse(PAYLOAD) as { id: string }).id}`);
    expect(eventHashInput(stored)).toBe(LEAF);
    // Erasing the payload changes nothing of the leaf or its hash.
    expect(eventHash({ ...stored, data: '', payload_salt: null })).toBe(sha256Hex(LEAF));
  });

  it('the public ids table lists exactly src/core/ledger/public-ids.ts', () => {
    const at = DOC.indexOf('<!-- public-ids');
    const rows = DOC.slice(at).split('\n').slice(3);
    const table: Record<string, [string, string][]> = {};
    for (const row of rows) {
      const m = /^\| `(\w+)` \| (.*) \|$/.exec(row);
      if (!m) break;
      table[m[1]] = [...m[2].matchAll(/`(\w+)`: `(\w+)`/g)].map((x) => [x[1], x[2]]);
    }
    expect(table).toEqual(Object.fromEntries(Object.entries(PUBLIC_IDS).map(([k, v]) => [k, v.map(([a, b]) => [a, b])])));
  });
});
