import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerClient, LedgerDownError } from '../../src/cli/gateway/ledger-client';
import { gatewayReceipt, GatewayReceipt } from '../../src/cli/gateway/receipt';
import { Spool } from '../../src/cli/gateway/spool';
import { RawResults, sseTap } from '../../src/cli/gateway/upstream';

/** Pipe `bytes` through the tap in chunks cut at `cuts`; resolves to every event's data. */
async function tapped(bytes: Buffer, cuts: number[]): Promise<string[]> {
  const seen: string[] = [];
  const tap = sseTap((d) => seen.push(d));
  const writer = tap.writable.getWriter();
  const reader = tap.readable.getReader();
  const out: Uint8Array[] = [];
  const reading = (async () => {
    for (;;) {
      const r = await reader.read();
      if (r.done) return;
      out.push(r.value);
    }
  })();
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    await writer.write(bytes.subarray(at, c));
    at = c;
  }
  await writer.close();
  await reading;
  expect(Buffer.concat(out).equals(bytes)).toBe(true); // the bytes pass on unchanged
  return seen;
}

describe('gateway capture of the upstream bytes', () => {
  const message = '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"café ✓"}],"n":1.0}}';
  const stream = Buffer.from(`event: message\r\nid: 1\r\ndata: ${message}\r\n\r\n: keep-alive\n\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n`, 'utf8');

  it('reads every event of an SSE stream however it is cut (inside a character, between CR and LF)', async () => {
    const whole = await tapped(stream, []);
    expect(whole).toEqual([message, '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}']);
    for (let cut = 1; cut < stream.length; cut++) expect(await tapped(stream, [cut])).toEqual(whole);
  });

  it('keeps the result member text by id, once', () => {
    const raw = new RawResults();
    raw.capture(message);
    raw.capture('[{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad"}}]');
    expect(raw.take(4)).toEqual({ member: 'result', text: '{"content":[{"type":"text","text":"café ✓"}],"n":1.0}' });
    expect(raw.take(4)).toBeUndefined();
    expect(raw.take('4')).toBeUndefined();
    expect(raw.take('a')).toEqual({ member: 'error', text: '{"code":-32602,"message":"bad"}' });
  });
});

describe('the spool', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'aer1-spool-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A ledger that is down until `up` is set, recording what it was given. */
  function fakeLedger(): { ledger: LedgerClient; up: { on: boolean }; got: string[] } {
    const up = { on: false };
    const got: string[] = [];
    const ledger = {
      recordReceipt: async (r: GatewayReceipt) => {
        if (!up.on) throw new LedgerDownError('down');
        got.push(`receipt ${r.id}`);
      },
      append: async (job: string, r: GatewayReceipt) => {
        got.push(`append ${job} ${r.id}`);
        return 1;
      },
    } as unknown as LedgerClient;
    return { ledger, up, got };
  }

  it('keeps what the ledger did not take across a restart, ignores a line torn by a crash, delivers in order and empties the file', async () => {
    const path = join(dir, 's.spool');
    const a = fakeLedger();
    const first = new Spool(path, a.ledger, () => undefined);
    const r1 = gatewayReceipt('echo', 'j', '{"a":1}', 'ok');
    const r2 = gatewayReceipt('fail', 'j', '{"isError":true}', 'tool_error');
    first.add('j', r1);
    first.add('j', r2);
    await first.flush();
    expect(first.size).toBe(2);
    expect(first.holds('j')).toBe(true);
    await first.close();
    writeFileSync(path, readFileSync(path, 'utf8') + '{"add":{"job":"j","rece'); // torn, never acknowledged
    const b = fakeLedger();
    const again = new Spool(path, b.ledger, () => undefined);
    const r3 = gatewayReceipt('echo', 'j', '{"a":3}', 'ok');
    again.add('j', r3); // after the torn line, on a line of its own
    await again.close();
    b.up.on = true;
    const second = new Spool(path, b.ledger, () => undefined);
    expect(second.size).toBe(3);
    await second.flush();
    expect(b.got).toEqual([`receipt ${r1.id}`, `append j ${r1.id}`, `receipt ${r2.id}`, `append j ${r2.id}`, `receipt ${r3.id}`, `append j ${r3.id}`]);
    expect(second.size).toBe(0);
    await second.close();
    expect(readFileSync(path, 'utf8')).toBe('');
  });
});
