/**
 * `aer1 verify-pack` against packs the server made and an operator then
 * forged (members removed, altered, repeated or renumbered; the manifest
 * recomputed, as it is not signed). The compiled server as a child process on
 * SQLite, the job recorded through OTLP; the CLI as a child process.
 * (From the security review of 2026-12-02; the line reader's linear time is
 * pinned in test/cli/pack-lines.spec.ts.)
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminKey, call, killAll, Reply, ServerProcess, waitUntil } from './helpers';
import { hex, request, span } from './otlp-json';

const AER1 = join(__dirname, '../../bin/aer1');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}
function verifyPack(file: string, vkey: string, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AER1, 'verify-pack', file, '--vkey', vkey], { timeout: timeoutMs, maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Rewrite a pack: `edit` gets the member lines (manifest chunks and trailer removed) and returns the new ones; the manifest is recomputed. */
function forgePack(pack: Buffer, edit: (lines: Buffer[]) => Buffer[]): Buffer {
  const nameOf = (b: Buffer): string => {
    try {
      return String(JSON.parse(b.toString('utf8')).member);
    } catch {
      return 'unparsable';
    }
  };
  const all: Buffer[] = [];
  let at = 0;
  for (;;) {
    const nl = pack.indexOf(0x0a, at);
    if (nl < 0) break;
    all.push(pack.subarray(at, nl));
    at = nl + 1;
  }
  const lines = edit(all.filter((b) => nameOf(b) !== 'manifest' && !nameOf(b).startsWith('manifest/')));
  const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
  const chunk = JSON.stringify({ member: 'manifest/0', members: lines.map((b) => [nameOf(b), sha(b)]) });
  const trailer = JSON.stringify({ member: 'manifest', format: 'aer1-evidence-pack/1', member_count: lines.length, chunks: [['manifest/0', sha(chunk)]] });
  return Buffer.concat([...lines.flatMap((b) => [b, Buffer.from('\n')]), Buffer.from(`${chunk}\n${trailer}\n`)]);
}
const member = (b: Buffer): Record<string, unknown> => JSON.parse(b.toString('utf8'));

describe('verify-pack on forged packs (server process, SQLite)', () => {
  jest.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-packs-attack-'));
  let server: ServerProcess;
  let url: string;
  let acme: string;
  let auditor: string;
  let vkey: string;
  let pack: Buffer;
  const write = (name: string, b: Buffer): string => {
    const f = join(dir, name);
    writeFileSync(f, b);
    return f;
  };

  beforeAll(async () => {
    const admin = adminKey();
    server = await ServerProcess.start({ DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}`, LEDGER_ADMIN_KEY: admin, CHECKPOINT_INTERVAL_MS: '200' });
    url = server.url;
    const key = async (name: string, role: string, owner?: string): Promise<string> => {
      const r = await call(url, 'POST', '/api/keys', { key: admin, body: JSON.stringify({ name, role, ...(owner ? { owner } : {}) }) });
      expect(r.status).toBe(201);
      return r.body.key as string;
    };
    acme = await key('acme-agent', 'producer', 'acme');
    auditor = await key('auditor', 'auditor');
    vkey = (await call(url, 'GET', '/.well-known/aer1')).body.log_vkey as string;
    expect(vkey).toMatch(/\+/);
    const job = `pack-${hex(4)}`;
    const trace = hex(16);
    const r = await call(url, 'POST', '/v1/traces', {
      key: acme,
      contentType: 'application/json',
      body: request([
        span({ trace, job, result: '{"a":1}', start: '1790000000000000000' }),
        span({ trace, job, result: '{"b":2}', start: '1790000001000000000' }),
        span({ trace, job, result: '{"c":3}', close: true, start: '1790000002000000000' }),
      ]),
    });
    expect(r.body.aer1.recorded).toBe(3);
    let got: Reply | undefined;
    await waitUntil('an evidence pack', 30_000, async () => {
      got = await call(url, 'GET', `/api/jobs/${job}/evidence`, { key: auditor });
      return got.status === 200;
    }, 300);
    pack = Buffer.from(got!.text, 'utf8');
  });

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the pack as served is VERIFIED (exit 0)', async () => {
    const r = await verifyPack(write('as-served.jsonl', pack), vkey);
    expect(r.stdout).toContain('Result: VERIFIED');
    expect(r.code).toBe(0);
  });

  it('a pack of a job stripped of every entry, receipt, commitment and event (manifest recomputed) is not VERIFIED', async () => {
    const forged = forgePack(pack, (lines) => lines.filter((b) => ['header', 'log/vkey', 'log/checkpoint'].includes(String(member(b).member))));
    const r = await verifyPack(write('stripped.jsonl', forged), vkey);
    // Today: "Result: VERIFIED", exit 0, for a job pack holding no timeline at all (the server never serves one:
    // a job without entries is 404); the timeline verdict is skipped when there are no entries.
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('Result: VERIFIED');
  });

  it('a receipt altered (manifest recomputed) is NOT VERIFIED (exit 1)', async () => {
    let done = false;
    const forged = forgePack(pack, (lines) =>
      lines.map((b) => {
        const m = member(b);
        if (done || !String(m.member).startsWith('receipt/')) return b;
        done = true;
        return Buffer.from(JSON.stringify({ ...m, raw: String(m.raw).replace('"search"', '"searcH"') }));
      }),
    );
    const r = await verifyPack(write('altered.jsonl', forged), vkey);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('NOT VERIFIED');
  });

  it('a member line repeated (manifest recomputed) is NOT VERIFIED (exit 1)', async () => {
    const forged = forgePack(pack, (lines) => [...lines.slice(0, 6), lines[5], ...lines.slice(6)]);
    const r = await verifyPack(write('dup.jsonl', forged), vkey);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('appears twice');
  });

  it('the middle entry and its event removed, the last renumbered (manifest recomputed) is NOT VERIFIED (exit 1)', async () => {
    const forged = forgePack(pack, (lines) => {
      const e2 = lines.map(member).find((m) => m.member === 'entry/2')!;
      return lines
        .filter((b) => {
          const m = member(b);
          return m.member !== 'entry/2' && !(String(m.member).startsWith('event/') && m.position === e2.position);
        })
        .map((b) => {
          const m = member(b);
          return m.member === 'entry/3' ? Buffer.from(JSON.stringify({ ...m, member: 'entry/2', seq: 2 })) : b;
        });
    });
    const r = await verifyPack(write('renumbered.jsonl', forged), vkey);
    expect(r.code).toBe(1);
  });

  it('a line that is not UTF-8 (manifest recomputed) is NOT VERIFIED (exit 1), not a crash', async () => {
    const forged = forgePack(pack, (lines) => {
      const h = lines[0].toString('utf8');
      return [Buffer.concat([Buffer.from(h.slice(0, h.lastIndexOf('}')) + ',"x":"'), Buffer.from([0xff, 0xc0, 0xaf]), Buffer.from('"}')]), ...lines.slice(1)];
    });
    const r = await verifyPack(write('nonutf8.jsonl', forged), vkey);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('not valid UTF-8');
  });
});
