/**
 * `npm run ledger -- log-list-entry` (src/log/log-list.ts): this log's entry
 * in the witness network's log list, read back by a reader written here from
 * the format (github.com/transparency-dev/witness-network log-list-format.md:
 * `logs/v0`, then per log `vkey`, optional `origin`, `qpd` in [1, 2^31),
 * `contact`, in that order; blank and `#` lines ignored). And the origin
 * rule the witness network asks for: a schema-less URL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSignerKey, parseVerifierKey, SIG_COSIGNATURE_V1, SIG_ED25519 } from '../../src/core/tlog';
import { validateConfig } from '../../src/config/configuration';
import { main as ledgerCli } from '../../src/ledger-cli';
import { createSigningKeyFile, defaultSigningKeyPath, LogKeyError, originSchemeProblem, resolveLogKey } from '../../src/log/log-key';
import { defaultQpd, logListEntry, MAX_QPD, parseQpd } from '../../src/log/log-list';

interface ListedLog {
  vkey: string;
  origin: string;
  qpd: number;
  contact: string;
}

/** A log list reader from the format's text alone. */
function readLogList(text: string): ListedLog[] {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (lines.shift() !== 'logs/v0') throw new Error('no logs/v0 header');
  const out: ListedLog[] = [];
  while (lines.length > 0) {
    const take = (kw: string): string => {
      const l = lines.shift() ?? '';
      if (!l.startsWith(`${kw} `) || l.length <= kw.length + 1) throw new Error(`expected ${kw}, got ${JSON.stringify(l)}`);
      return l.slice(kw.length + 1);
    };
    const vkey = take('vkey');
    const v = parseVerifierKey(vkey);
    if (v.type !== SIG_ED25519) throw new Error('only Ed25519 log keys');
    const origin = lines[0]?.startsWith('origin ') ? take('origin') : v.name;
    const q = take('qpd');
    if (!/^[1-9][0-9]*$/.test(q) || Number(q) >= 2 ** 31) throw new Error(`bad qpd ${q}`);
    out.push({ vkey, origin, qpd: Number(q), contact: take('contact') });
  }
  return out;
}

async function cli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; out: string; err: string }> {
  const saved = { ...process.env };
  let out = '';
  let err = '';
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  for (const k of ['LEDGER_SIGNING_KEY_FILE', 'LEDGER_ORIGIN', 'DATABASE_URL', 'CHECKPOINT_INTERVAL_MS']) delete process.env[k];
  Object.assign(process.env, env);
  try {
    const code = await ledgerCli(args);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.env = saved;
  }
}

describe('the log-list entry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aer1-loglist-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is vkey, qpd, contact lines that a log-list reader reads back (no origin line: the key name is the origin)', () => {
    const k = generateSignerKey('ledger.example.com/aer1');
    const entry = logListEntry({ vkey: k.verifierKey, origin: 'ledger.example.com/aer1', qpd: 1440, contact: ' ops@example.com ' });
    expect(entry).toBe(`vkey ${k.verifierKey}\nqpd 1440\ncontact ops@example.com\n`);
    const list = `#\n# List: testing\n#\nlogs/v0\n\nvkey ${generateSignerKey('other.example').verifierKey}\nqpd 24\ncontact sysadmin (at) other.example\n\n${entry}`;
    expect(readLogList(list)[1]).toEqual({ vkey: k.verifierKey, origin: 'ledger.example.com/aer1', qpd: 1440, contact: 'ops@example.com' });
  });

  it('refuses what the format does not take', () => {
    const k = generateSignerKey('ledger.example.com');
    const entry = (o: Partial<Parameters<typeof logListEntry>[0]>) => () => logListEntry({ vkey: k.verifierKey, origin: 'ledger.example.com', qpd: 24, contact: 'a@b', ...o });
    expect(entry({ vkey: generateSignerKey('w.example', SIG_COSIGNATURE_V1).verifierKey })).toThrow('Ed25519 log keys (type 0x01) only');
    expect(entry({ qpd: 0 })).toThrow('qpd must be in [1, 2^31)');
    expect(entry({ qpd: MAX_QPD + 1 })).toThrow('qpd must be in [1, 2^31)');
    expect(entry({ contact: '  ' })).toThrow('the contact is empty');
    expect(entry({ contact: 'a@b\nqpd 9' })).toThrow('control character');
    expect(entry({ origin: 'https://ledger.example.com' })).toThrow('starts with a URL scheme (https://)');
    expect([parseQpd('86400'), parseQpd(String(MAX_QPD))]).toEqual([86400, MAX_QPD]);
    for (const bad of ['0', '012', '1e3', '-5', '', String(MAX_QPD + 1)]) expect(() => parseQpd(bad)).toThrow(RangeError);
    // The most this ledger sends a witness per day: one add-checkpoint per signed checkpoint.
    expect([defaultQpd(1000), defaultQpd(60_000), defaultQpd(7000), defaultQpd(3_600_000)]).toEqual([86400, 1440, 12343, 24]);
  });

  it('npm run ledger -- log-list-entry prints the entry of the key the server signs with, creating nothing', async () => {
    const keyFile = join(dir, 'log.key');
    const vkey = createSigningKeyFile(keyFile, 'ledger.example.com/aer1').vkey;
    const r = await cli(['log-list-entry', '--contact', 'ops@example.com'], { LEDGER_SIGNING_KEY_FILE: keyFile, DATABASE_URL: 'postgres://x/y' });
    expect(r).toEqual({ code: 0, out: `vkey ${vkey}\nqpd 86400\ncontact ops@example.com\n`, err: '' });
    const slow = await cli(['log-list-entry', '--contact', 'https://example.com/contact', '--qpd', '1440'], { LEDGER_SIGNING_KEY_FILE: keyFile, CHECKPOINT_INTERVAL_MS: '60000', DATABASE_URL: 'postgres://x/y' });
    expect(slow).toEqual({ code: 0, out: `vkey ${vkey}\nqpd 1440\ncontact https://example.com/contact\n`, err: '' });
    const under = await cli(['log-list-entry', '--contact', 'ops@example.com', '--qpd', '24'], { LEDGER_SIGNING_KEY_FILE: keyFile, DATABASE_URL: 'postgres://x/y' });
    expect([under.code, under.out.split('\n')[1]]).toEqual([0, 'qpd 24']);
    expect(under.err).toBe('ledger: warning: with CHECKPOINT_INTERVAL_MS=1000 the ledger may send each witness up to 86400 add-checkpoint requests a day, more than --qpd 24; set CHECKPOINT_INTERVAL_MS=3600000 or more\n');

    // The SQLite default key beside the database, read only: before the first start there is none.
    const db = join(dir, 'ledger.sqlite');
    const missing = await cli(['log-list-entry', '--contact', 'a@b'], { DATABASE_URL: `sqlite:${db}` });
    expect([missing.code, missing.out, missing.err]).toEqual([2, '', `ledger: no log signing key at ${defaultSigningKeyPath(db)} yet: start the ledger once on sqlite:${db} (it creates the key), or set LEDGER_SIGNING_KEY_FILE\n`]);
    const sqliteVkey = createSigningKeyFile(defaultSigningKeyPath(db), 'localhost:3000').vkey;
    expect((await cli(['log-list-entry', '--contact', 'a@b'], { DATABASE_URL: `sqlite:${db}` })).out).toBe(`vkey ${sqliteVkey}\nqpd 86400\ncontact a@b\n`);

    const usage = [];
    for (const [args, env] of [
      [['log-list-entry'], { LEDGER_SIGNING_KEY_FILE: keyFile }],
      [['log-list-entry', '--contact', 'a@b', '--qpd', '0'], { LEDGER_SIGNING_KEY_FILE: keyFile }],
      [['log-list-entry', '--contact', 'a@b'], { DATABASE_URL: 'postgres://x/y' }],
      [['log-list-entry', '--contact', 'a@b'], { DATABASE_URL: 'sqlite::memory:' }],
    ] as [string[], Record<string, string>][]) {
      usage.push(await cli(args, env));
    }
    expect(usage.map((u) => [u.code, u.out])).toEqual([
      [2, ''],
      [2, ''],
      [2, ''],
      [2, ''],
    ]);
    expect(usage[0].err).toMatch(/--contact is required/);
    expect(usage[1].err).toMatch(/--qpd must be a decimal number without leading zeros, at least 1/);
    expect(usage[2].err).toMatch(/no LEDGER_SIGNING_KEY_FILE/);
    expect(usage[3].err).toMatch(/an in-memory database has a key only for the life of its process/);
  });
});

describe('the origin is a schema-less URL (C2SP tlog-checkpoint; the witness network)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aer1-origin-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the scheme and the schema-less form', () => {
    expect(originSchemeProblem('https://ledger.example.com/')).toBe(
      "LEDGER_ORIGIN https://ledger.example.com/ starts with a URL scheme (https://): a log origin is a schema-less URL (C2SP tlog-checkpoint, and the witness network's rule), e.g. ledger.example.com",
    );
    expect(originSchemeProblem('HTTP://x.example/log')).toMatch(/URL scheme \(HTTP:\/\/\).*e\.g\. x\.example\/log$/);
    for (const ok of ['ledger.example.com/aer1', 'localhost:3000', 'example.com/https://x', 'ledger.test']) expect(originSchemeProblem(ok)).toBeNull();
  });

  it('refuses LEDGER_ORIGIN and a new key with a scheme; a key made before the rule starts with a warning', () => {
    expect(() => validateConfig({ LEDGER_ORIGIN: 'https://ledger.example.com' })).toThrow('invalid configuration: LEDGER_ORIGIN https://ledger.example.com starts with a URL scheme (https://)');
    expect(validateConfig({ LEDGER_ORIGIN: 'ledger.example.com' }).LEDGER_ORIGIN).toBe('ledger.example.com');
    expect(() => resolveLogKey({ origin: 'https://ledger.example.com', databaseUrl: 'sqlite::memory:', port: 3000 })).toThrow(LogKeyError);
    expect(() => createSigningKeyFile(join(dir, 'new.key'), 'https://ledger.example.com')).toThrow('the origin https://ledger.example.com starts with a URL scheme');

    // A key whose name has a scheme (written before the rule, here by hand): its log keeps its origin and starts.
    const old = generateSignerKey('https://old.example.com');
    const file = join(dir, 'old.key');
    writeFileSync(file, `${old.signerKey}\n`, { mode: 0o600 });
    const r = resolveLogKey({ keyFile: file, databaseUrl: 'postgres://x/y', port: 3000 });
    expect(r.ok && r.identity.origin).toBe('https://old.example.com');
    expect(r.warnings).toEqual([
      `the origin https://old.example.com starts with a URL scheme (https://): a log origin is a schema-less URL (C2SP tlog-checkpoint, and the witness network's rule), e.g. old.example.com; it is the name of the signing key ${file}, fixed when the log began: public witnesses may refuse this log (a new origin is a new log)`,
    ]);
  });

  it('log-list-entry refuses a log whose origin has a scheme', async () => {
    const old = generateSignerKey('https://old2.example.com');
    const file = join(dir, 'old2.key');
    writeFileSync(file, `${old.signerKey}\n`, { mode: 0o600 });
    const r = await cli(['log-list-entry', '--contact', 'a@b'], { LEDGER_SIGNING_KEY_FILE: file });
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/^ledger: the origin https:\/\/old2\.example\.com starts with a URL scheme/);
  });
});
