/**
 * A new port keeps the old origin (issue 27): the log's origin is fixed when
 * it begins (its key's name) and never follows PORT or PUBLIC_BASE_URL, but a
 * start whose address is not that origin says so once, with what it means and
 * how to start a new origin deliberately. The ledger CLI (no address) does not.
 */
import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.factory';
import { LogIdentityService, ORIGIN_LOG_CONTEXT } from '../../src/log/log-identity.service';
import { createSigningKeyFile, defaultSigningKeyPath, originWarning, resolveLogKey } from '../../src/log/log-key';

describe('the start warning about an origin that is not this start\'s address', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'aer1-origin-'));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('first start on 3000 makes localhost:3000 and says nothing; a start on 3917 keeps localhost:3000 and warns, naming both and the way out', () => {
    const databaseUrl = `sqlite:${join(dir, 'ledger.sqlite')}`;
    const first = resolveLogKey({ databaseUrl, port: 3000 });
    expect(first.ok && [first.identity.origin, first.identity.source.kind, first.originWarning]).toEqual(['localhost:3000', 'created', undefined]);
    const again = resolveLogKey({ databaseUrl, port: 3000 });
    expect(again.ok && [again.identity.source.kind, again.originWarning]).toEqual(['file', undefined]);
    const moved = resolveLogKey({ databaseUrl, port: 3917 });
    expect(moved.ok).toBe(true);
    if (!moved.ok) return;
    expect(moved.identity.origin).toBe('localhost:3000'); // the origin does not follow the port
    const path = defaultSigningKeyPath(join(dir, 'ledger.sqlite'));
    expect(moved.originWarning).toBe(
      `this log's origin is localhost:3000 (the name of its signing key ${path}, fixed when the log began) but this start's address is localhost:3917 (PUBLIC_BASE_URL is unset, so from PORT=3917). ` +
        'Every checkpoint, proof and evidence pack goes on naming localhost:3000: a log keeps its origin for ever, and verifiers pin it with the log\'s key. ' +
        'To keep it and silence this warning, set LEDGER_ORIGIN=localhost:3000. ' +
        'To start a new origin deliberately, start a new log: a new database (on SQLite a new DATABASE_URL file, whose key is made for localhost:3917 at its first start; ' +
        'on PostgreSQL a new database with LEDGER_SIGNING_KEY_FILE from "npm run ledger -- create-signing-key --out FILE --origin localhost:3917"). The records already written stay under localhost:3000.',
    );
    expect(moved.warnings).toEqual([]); // kept apart, so the ledger CLI can leave it out
    // PUBLIC_BASE_URL names the address when set.
    const behind = resolveLogKey({ databaseUrl, port: 3000, publicBaseUrl: 'https://ledger.example.com' });
    expect(behind.ok && behind.originWarning).toMatch(/but this start's address is ledger\.example\.com \(PUBLIC_BASE_URL=https:\/\/ledger\.example\.com\)\. /);
    // LEDGER_ORIGIN equal to the key's name: the origin is meant; nothing said.
    const meant = resolveLogKey({ databaseUrl, port: 3917, origin: 'localhost:3000' });
    expect(meant.ok && meant.originWarning).toBeUndefined();
  });

  it('agrees when the origin is the address or a path under it', () => {
    expect(originWarning('ledger.example.com', undefined, { publicBaseUrl: 'https://ledger.example.com', port: 3000 })).toBeNull();
    expect(originWarning('ledger.example.com/aer1', undefined, { publicBaseUrl: 'https://ledger.example.com', port: 3000 })).toBeNull();
    expect(originWarning('ledger.example.community', undefined, { publicBaseUrl: 'https://ledger.example.com', port: 3000 })).toMatch(/^this log's origin is ledger\.example\.community /);
    const file = join(dir, 'k.key');
    createSigningKeyFile(file, 'ledger.example.com/aer1');
    const r = resolveLogKey({ keyFile: file, databaseUrl: 'postgres://x/y', publicBaseUrl: 'https://ledger.example.com', port: 3000 });
    expect(r.ok && r.originWarning).toBeUndefined();
    const elsewhere = resolveLogKey({ keyFile: file, databaseUrl: 'postgres://x/y', publicBaseUrl: 'https://other.example.org', port: 3000 });
    expect(elsewhere.ok && elsewhere.originWarning).toMatch(/^this log's origin is ledger\.example\.com\/aer1 \(the name of its signing key .*k\.key, fixed when the log began\) but this start's address is other\.example\.org /);
  });

  it('the service warns once at start, under its own logger context', async () => {
    const databaseUrl = `sqlite:${join(dir, 'ledger.sqlite')}`;
    createSigningKeyFile(defaultSigningKeyPath(join(dir, 'ledger.sqlite')), 'localhost:3000');
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const app = await createApp({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, PORT: '3917' });
    try {
      await app.init();
      expect(app.get(LogIdentityService).current?.origin).toBe('localhost:3000');
      const calls = warn.mock.calls.filter((c) => String(c[0]).startsWith("this log's origin is localhost:3000"));
      expect(calls).toHaveLength(1);
      const loggers = warn.mock.instances.filter((_, i) => String(warn.mock.calls[i][0]).startsWith("this log's origin is"));
      expect((loggers[0] as unknown as { context?: string }).context).toBe(ORIGIN_LOG_CONTEXT);
    } finally {
      await app.close();
    }
  });
});
