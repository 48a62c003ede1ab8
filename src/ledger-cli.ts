/**
 * Operator commands, run as `npm run ledger -- <command>` against the
 * configured DATABASE_URL:
 *   rebuild-projections                 replay every event into fresh read models
 *   create-key --role ROLE --name NAME [--owner O] [--systems A,B] [--gateway] [--publication full|metadata] [--retention P30D]
 *     (`--role outcome --systems PAYMENTS`: a key of the system that owns an effect, issue 18)
 *                                        print a new API key (shown once)
 *   revoke-key ID                        revoke a key
 *   list-keys                            keys without secrets
 *   create-signing-key --out FILE [--origin ORIGIN]
 *                                        write a new log signing key (Ed25519, mode 0600, never
 *                                        overwritten) for LEDGER_SIGNING_KEY_FILE; prints its vkey
 *   export-tiles --out DIR               write the log's static copy (C2SP tlog-tiles: checkpoint,
 *                                        tiles, entry bundles) up to the served checkpoint into DIR,
 *                                        as TILES_DIR does while the server runs (docs/tiles.md)
 *   log-list-entry --contact CONTACT [--qpd N]
 *                                        print this log's entry in the witness network's log-list
 *                                        format (vkey, qpd, contact: src/log/log-list.ts); reads the
 *                                        signing key the server would use, creates nothing
 *   verify                               recompute the ledger hash chain and audit every
 *                                        projection row against the events: the check of
 *                                        `aer1 ledger verify --database "$DATABASE_URL"`
 *                                        (one code path, read-only, no migrations run)
 * Exit codes: 0 done, 1 the ledger does not verify or the database failed,
 * 2 usage error (bad option, unknown role or key id).
 */
import { existsSync } from 'node:fs';
import 'reflect-metadata';
import { Command, CommanderError } from 'commander';
import { NestFactory } from '@nestjs/core';
import type { LoggerService } from '@nestjs/common';
import { AppModule } from './app.module';
import { ApiKeysService, Publication, Role, ROLES } from './auth/api-keys.service';
import { LedgerService } from './ledger/ledger.service';
import { LedgerError } from './common/errors';
import { DEFAULT_DATABASE_URL } from './database/database-url';
import { verifyLedgerDatabase } from './ledger/offline-verify';
import { DatabaseService } from './database/database.service';
import { EventsRepository } from './ledger/events.repository';
import { LogService } from './log/log.service';
import { TilesDir } from './log/tiles-dir';
import { createSigningKeyFile, defaultOrigin, LogKeyError, readLogKey } from './log/log-key';
import { defaultQpd, logListEntry, parseQpd } from './log/log-list';
import { createNostrKeyFile } from './log/nostr-config';

/**
 * Warnings and errors go to stderr, one line each: stdout carries only the
 * command's answer (`create-key` prints JSON that scripts parse). The
 * server's PUBLIC_BASE_URL warning is left out: these commands write no
 * record URL, and it named the default port whatever port the server runs on;
 * so is its warning about an origin that is not that address (LogOrigin).
 */
const STDERR_LOGGER: LoggerService = {
  log: () => undefined,
  error: (message: unknown) => void process.stderr.write(`ledger: ${String(message)}\n`),
  warn: (message: unknown, context?: unknown) => (context === 'PublicUrls' || context === 'LogOrigin' ? undefined : void process.stderr.write(`ledger: warning: ${String(message)}\n`)),
};

async function withLedger<T>(fn: (app: Awaited<ReturnType<typeof NestFactory.createApplicationContext>>) => Promise<T>): Promise<T> {
  const app = await NestFactory.createApplicationContext(AppModule.register({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' }), { logger: STDERR_LOGGER, abortOnError: false });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

/** Run the operator CLI; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('ledger').description('AER-1 ledger operator commands (uses DATABASE_URL)').exitOverride();
  let code = 0;
  program.command('rebuild-projections').description('rebuild every read model from the events').action(async () => {
    const r = await withLedger((app) => app.get(LedgerService).rebuildProjections());
    process.stdout.write(`rebuilt ${r.projections.join(', ')} from ${r.events} events\n`);
  });
  program
    .command('create-key')
    .description('create an API key; the key is printed once')
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`)
    .requiredOption('--name <name>', 'who holds the key')
    .option('--owner <owner>', 'who the key belongs to: keys of one owner may act on each other\'s records')
    .option('--systems <list>', 'comma-separated systems: a producer key may claim them as "EXECUTED BY <system>" (restricts the key; "" for none); an outcome key speaks for them (required with --role outcome)')
    .option('--gateway', 'a restricted key may also claim "OBSERVED VIA GATEWAY"')
    .option('--publication <setting>', 'full (default) or metadata: canonical bytes served to auditors only')
    .option('--retention <period>', 'ISO 8601 duration (P30D): payloads of the key\'s records older than it are erased by the ledger, instead of RETENTION_PERIOD')
    .action(async (o: { role: string; name: string; owner?: string; systems?: string; gateway?: boolean; publication?: string; retention?: string }) => {
      const systems = o.systems === undefined ? undefined : o.systems.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
      const k = await withLedger((app) =>
        app.get(ApiKeysService).create(o.name, o.role as Role, { owner: o.owner, systems, gateway: o.gateway === true ? true : undefined, publication: o.publication as Publication | undefined, retention_period: o.retention }),
      );
      process.stdout.write(`${JSON.stringify(k)}\n`);
    });
  program.command('revoke-key <id>').description('revoke an API key').action(async (id: string) => {
    await withLedger((app) => app.get(ApiKeysService).revoke(id));
    process.stdout.write(`revoked ${id}\n`);
  });
  program.command('list-keys').description('list API keys (no secrets)').action(async () => {
    const keys = await withLedger((app) => app.get(ApiKeysService).list());
    for (const k of keys) process.stdout.write(`${JSON.stringify(k)}\n`);
  });
  program
    .command('create-signing-key')
    .description('write a new log signing key (Ed25519, mode 0600) for LEDGER_SIGNING_KEY_FILE; prints its verifier key (vkey)')
    .requiredOption('--out <file>', 'the key file to create (never overwritten)')
    .option('--origin <origin>', 'the log origin, e.g. ledger.example.com/aer1 (default: LEDGER_ORIGIN, else PUBLIC_BASE_URL without its scheme)')
    .action((o: { out: string; origin?: string }) => {
      const origin = o.origin ?? process.env.LEDGER_ORIGIN ?? defaultOrigin(process.env.PUBLIC_BASE_URL, Number(process.env.PORT ?? 3000));
      const signer = createSigningKeyFile(o.out, origin);
      process.stdout.write(`${signer.vkey}\n`);
      process.stderr.write(`ledger: wrote ${o.out} (mode 0600) for origin ${origin}; start the server with LEDGER_SIGNING_KEY_FILE=${o.out}, give auditors the vkey above\n`);
    });
  program
    .command('create-nostr-key')
    .description('write a new Nostr publisher key (secp256k1, 64 hex, mode 0600) for NOSTR_KEY_FILE; prints its public key in hex and npub form')
    .requiredOption('--out <file>', 'the key file to create (never overwritten)')
    .action((o: { out: string }) => {
      const k = createNostrKeyFile(o.out);
      process.stdout.write(`${k.pubkey}\n${k.npub}\n`);
      process.stderr.write(`ledger: wrote ${o.out} (mode 0600); start the server with NOSTR_KEY_FILE=${o.out} and NOSTR_RELAYS; give auditors the public key above (aer1 --nostr-pubkey), see docs/nostr.md\n`);
    });
  program
    .command('export-tiles')
    .description("write the log's static copy (C2SP tlog-tiles) up to the checkpoint GET /checkpoint serves; full tiles already in DIR are kept")
    .requiredOption('--out <dir>', 'the folder (created when missing); serve it as the log prefix, see docs/tiles.md')
    .action(async (o: { out: string }) => {
      // Reads an existing ledger: a mistyped SQLite path must not create a new database (and a new log key).
      const url = process.env.DATABASE_URL;
      if (url?.startsWith('sqlite:') && url !== 'sqlite::memory:' && !existsSync(url.slice('sqlite:'.length))) throw new Error(`no database at ${url.slice('sqlite:'.length)}: export-tiles reads an existing ledger (check DATABASE_URL)`);
      const r = await withLedger(async (app) => {
        const cp = await app.get(LogService).latest();
        if (!cp) throw new Error('the log has no checkpoint to export yet (start the server with a signing key once, or wait for the first checkpoint)');
        return new TilesDir(o.out, app.get(EventsRepository)).write(app.get(DatabaseService), cp);
      });
      process.stdout.write(`${JSON.stringify({ out: o.out, ...r })}\n`);
    });
  program
    .command('log-list-entry')
    .description("print this log's entry in the witness network's log list (vkey, qpd, contact), to send to its maintainers (docs/witnesses.md)")
    .option('--contact <contact>', 'how witness operators reach you: an email address or URL (required by the format)')
    .option('--qpd <n>', 'add-checkpoint requests per day the log may make (default: 86400000 / CHECKPOINT_INTERVAL_MS, the most it makes)')
    .action((o: { contact?: string; qpd?: string }) => {
      const interval = Number(process.env.CHECKPOINT_INTERVAL_MS || 1000);
      const most = defaultQpd(interval);
      let qpd: number;
      try {
        qpd = o.qpd === undefined ? most : parseQpd(o.qpd);
      } catch (e) {
        throw new LogKeyError((e as Error).message);
      }
      if (o.contact === undefined) throw new LogKeyError('--contact is required: the log list\'s contact line is how witness operators reach you (an email address or URL)');
      const { signer } = readLogKey({ keyFile: process.env.LEDGER_SIGNING_KEY_FILE || undefined, origin: process.env.LEDGER_ORIGIN || undefined, databaseUrl: process.env.DATABASE_URL || DEFAULT_DATABASE_URL });
      let entry: string;
      try {
        entry = logListEntry({ vkey: signer.vkey, origin: signer.name, qpd, contact: o.contact });
      } catch (e) {
        throw new LogKeyError((e as Error).message);
      }
      process.stdout.write(entry);
      if (qpd < most) {
        process.stderr.write(`ledger: warning: with CHECKPOINT_INTERVAL_MS=${interval} the ledger may send each witness up to ${most} add-checkpoint requests a day, more than --qpd ${qpd}; set CHECKPOINT_INTERVAL_MS=${Math.ceil(86_400_000 / qpd)} or more\n`);
      }
    });
  program.command('verify').description('recompute the ledger hash chain and audit the read models against the events').action(async () => {
    const r = await verifyLedgerDatabase(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
    process.stdout.write(`${JSON.stringify(r)}\n`);
    if (!r.ok) code = 1;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    process.stderr.write(`ledger: ${e instanceof Error ? e.message : String(e)}\n`);
    // A refused argument (unknown role, unknown key id, an existing key file) is a usage error like a bad option.
    return (e instanceof LedgerError && e.status < 500) || e instanceof LogKeyError ? 2 : 1;
  }
  return code;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((c) => process.exit(c));
}
