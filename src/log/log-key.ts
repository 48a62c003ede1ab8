/**
 * The log's identity: its origin (C2SP tlog-checkpoint: a schema-less URL
 * such as `ledger.example.com/aer1`) and its Ed25519 signing key, whose
 * name is the origin (the checkpoint's signature line is named by it).
 *
 * Where the key comes from, in order:
 * 1. `LEDGER_SIGNING_KEY_FILE`: a signer key file (`PRIVATE+KEY+<origin>+<hex id>+<base64>`,
 *    written by `npm run ledger -- create-signing-key --out FILE`).
 * 2. The embedded default (a SQLite file): `<database name>.log-signing.key`
 *    beside it (`ledger.log-signing.key` for `ledger.sqlite`), created on first
 *    start (mode 0600): one key per database, so two databases in one folder
 *    are never one origin's two histories.
 * 3. An in-memory SQLite database: a key for the life of the process.
 * 4. PostgreSQL without a key file: none. Replicas must share one key, so
 *    none is invented; checkpoints are not signed and /health says why.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { defaultCheckpointStatePath } from './checkpoint-state';
import { formatSignerKey, generateSignerKey, isValidKeyName, NoteSigner, parseSignerKey, SIG_ED25519 } from '../core/tlog';

/** The default key file of a SQLite database file: `<name without extension>.log-signing.key` beside it. */
export function defaultSigningKeyPath(databaseFile: string): string {
  return join(dirname(databaseFile), `${basename(databaseFile).replace(/\.[^.]*$/, '') || 'ledger'}.log-signing.key`);
}

/** A usable log key. */
export interface LogIdentity {
  origin: string;
  signer: NoteSigner;
  /** The C2SP vkey: `<origin>+<hex key id>+<base64(0x01 || public key)>`. */
  vkey: string;
  /** Where it came from: a configured file, a file created now, or memory only. */
  source: { kind: 'file' | 'created' | 'ephemeral'; path?: string };
  /**
   * The signer's state file (the newest checkpoint this key signed; see checkpoint-state.ts):
   * LEDGER_CHECKPOINT_STATE_FILE, else beside the key file; null for an ephemeral key without it (memory only).
   */
  statePath: string | null;
}

/** The answer of {@link resolveLogKey}: an identity, or why there is none. */
export type LogKeyResolution = { ok: true; identity: LogIdentity; warnings: string[]; originWarning?: string } | { ok: false; reason: string; warnings: string[] };

/** A configuration the service cannot start with (a bad key file, an origin that is not the key's). */
export class LogKeyError extends Error {}

/**
 * Why `origin` is not a schema-less URL, or null. C2SP tlog-checkpoint
 * ("Note text": the origin SHOULD be a schema-less URL such as
 * `example.com/log42`) and the witness network's log guidelines
 * (witness-network.org/participate: "We recommend using a schema-less URL")
 * ask for one; public witnesses key their state by the origin, so it is
 * checked before a log begins under it.
 */
export function originSchemeProblem(origin: string, what = 'LEDGER_ORIGIN'): string | null {
  const m = /^([A-Za-z][A-Za-z0-9.-]*):\/\//.exec(origin);
  if (!m) return null;
  return `${what} ${origin} starts with a URL scheme (${m[1]}://): a log origin is a schema-less URL (C2SP tlog-checkpoint, and the witness network's rule), e.g. ${origin.slice(m[0].length).replace(/\/+$/, '') || 'ledger.example.com/aer1'}`;
}

/** The default origin when none is set: the PUBLIC_BASE_URL without its scheme, or `localhost:<port>`. */
export function defaultOrigin(publicBaseUrl: string | undefined, port: number): string {
  const base = publicBaseUrl ? publicBaseUrl.replace(/^https?:\/\//, '').replace(/\/+$/, '') : `localhost:${port}`;
  return isValidKeyName(base) ? base : `localhost:${port}`;
}

/**
 * The start warning when the log's origin (its key's name) is not the address
 * this start would name a new log after, or null: PUBLIC_BASE_URL without its
 * scheme, else `localhost:<PORT>` ({@link defaultOrigin}). An origin under
 * that address (`ledger.example.com/aer1` for `https://ledger.example.com`)
 * agrees; LEDGER_ORIGIN set (it must equal the key's name) says the origin
 * is meant, so nothing is said.
 */
export function originWarning(origin: string, keyPath: string | undefined, cfg: { origin?: string; publicBaseUrl?: string; port: number }): string | null {
  if (cfg.origin !== undefined) return null;
  const address = defaultOrigin(cfg.publicBaseUrl, cfg.port);
  if (origin === address || origin.startsWith(`${address}/`)) return null;
  const from = cfg.publicBaseUrl ? `PUBLIC_BASE_URL=${cfg.publicBaseUrl}` : `PUBLIC_BASE_URL is unset, so from PORT=${cfg.port}`;
  return (
    `this log's origin is ${origin} (the name of its signing key${keyPath ? ` ${keyPath}` : ''}, fixed when the log began) but this start's address is ${address} (${from}). ` +
    `Every checkpoint, proof and evidence pack goes on naming ${origin}: a log keeps its origin for ever, and verifiers pin it with the log's key. ` +
    `To keep it and silence this warning, set LEDGER_ORIGIN=${origin}. ` +
    `To start a new origin deliberately, start a new log: a new database (on SQLite a new DATABASE_URL file, whose key is made for ${address} at its first start; ` +
    `on PostgreSQL a new database with LEDGER_SIGNING_KEY_FILE from "npm run ledger -- create-signing-key --out FILE --origin ${address}"). The records already written stay under ${origin}.`
  );
}

/** Read a log signer key file (type 0x01). Throws LogKeyError naming the file; never shows key material. */
export function readSigningKeyFile(path: string): { signer: NoteSigner; warnings: string[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new LogKeyError(`cannot read LEDGER_SIGNING_KEY_FILE ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let signer: NoteSigner;
  try {
    signer = parseSignerKey(text.trim());
  } catch (e) {
    throw new LogKeyError(`${path} is not a log signing key (${(e as Error).message}); make one with "npm run ledger -- create-signing-key --out FILE"`);
  }
  if (signer.type !== SIG_ED25519) throw new LogKeyError(`${path} is a witness key (type 0x04), not a log signing key (type 0x01)`);
  const warnings: string[] = [];
  try {
    if ((statSync(path).mode & 0o077) !== 0) warnings.push(`${path} is readable by other users; chmod 600 it`);
  } catch (_) {
    /* statted above by the read */
  }
  return { signer, warnings };
}

/**
 * Write a new log signing key named `origin` to `out` (mode 0600, fsynced;
 * an existing file is never overwritten). Returns the signer.
 */
export function createSigningKeyFile(out: string, origin: string): NoteSigner {
  if (!isValidKeyName(origin)) throw new LogKeyError(`the origin ${JSON.stringify(String(origin).slice(0, 200))} is not a valid key name (non-empty, no spaces, no +)`);
  const scheme = originSchemeProblem(origin, 'the origin');
  if (scheme) throw new LogKeyError(scheme);
  const { signer } = generateSignerKey(origin, SIG_ED25519);
  let fd: number;
  try {
    fd = openSync(out, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new LogKeyError(`${out} already exists; not overwriting a key`);
    throw new LogKeyError(`cannot create ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    writeSync(fd, `${formatSignerKey(signer)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return signer;
}

/** The SQLite file a DATABASE_URL names, or null (in memory, or PostgreSQL). */
function sqliteFile(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith('sqlite:')) return null;
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? null : resolve(path);
}

/**
 * Find or make the log key for this configuration (see the module comment).
 * Throws {@link LogKeyError} for a configuration that must not start: an
 * unreadable or wrong key file, `LEDGER_ORIGIN` differing from the key's
 * name (a new origin is a new log: make a new key), or `LEDGER_ORIGIN` with
 * a URL scheme ({@link originSchemeProblem}). A key file whose name has a
 * scheme (made before the rule) starts with a warning: its origin is fixed.
 */
export function resolveLogKey(cfg: { keyFile?: string; stateFile?: string; origin?: string; databaseUrl: string; publicBaseUrl?: string; port: number }): LogKeyResolution {
  const warnings: string[] = [];
  const identity = (signer: NoteSigner, source: LogIdentity['source']): LogKeyResolution => {
    if (cfg.origin !== undefined && cfg.origin !== signer.name) {
      throw new LogKeyError(`LEDGER_ORIGIN is ${cfg.origin} but the signing key${source.path ? ` ${source.path}` : ''} is for ${signer.name}: a log keeps its origin (a new origin needs a new key)`);
    }
    const statePath = cfg.stateFile ? resolve(cfg.stateFile) : source.path ? defaultCheckpointStatePath(resolve(source.path)) : null;
    // A key made before the rule: its origin is for ever, so it starts, with a warning (log-list-entry refuses it).
    const scheme = originSchemeProblem(signer.name, 'the origin');
    if (scheme) warnings.push(`${scheme}; it is the name of the signing key${source.path ? ` ${source.path}` : ''}, fixed when the log began: public witnesses may refuse this log (a new origin is a new log)`);
    // A key found (not made now for this address): say so when the address moved since the log began.
    const moved = source.kind === 'file' ? originWarning(signer.name, source.path, cfg) : null;
    return { ok: true, identity: { origin: signer.name, signer, vkey: signer.vkey, source, statePath }, warnings, ...(moved ? { originWarning: moved } : {}) };
  };
  if (cfg.origin !== undefined && !isValidKeyName(cfg.origin)) throw new LogKeyError('LEDGER_ORIGIN must be non-empty, without spaces or +');
  const scheme = cfg.origin !== undefined ? originSchemeProblem(cfg.origin) : null;
  if (scheme) throw new LogKeyError(scheme);
  if (cfg.keyFile) {
    const r = readSigningKeyFile(cfg.keyFile);
    warnings.push(...r.warnings);
    return identity(r.signer, { kind: 'file', path: cfg.keyFile });
  }
  const origin = cfg.origin ?? defaultOrigin(cfg.publicBaseUrl, cfg.port);
  const file = sqliteFile(cfg.databaseUrl);
  if (file !== null) {
    const path = defaultSigningKeyPath(file);
    if (existsSync(path)) {
      const r = readSigningKeyFile(path);
      warnings.push(...r.warnings);
      return identity(r.signer, { kind: 'file', path });
    }
    return identity(createSigningKeyFile(path, origin), { kind: 'created', path });
  }
  if (cfg.databaseUrl.startsWith('sqlite:')) return identity(generateSignerKey(origin, SIG_ED25519).signer, { kind: 'ephemeral' });
  return { ok: false, reason: 'no LEDGER_SIGNING_KEY_FILE: with PostgreSQL every replica must sign with the same key, so none is created; checkpoints are not signed', warnings };
}

/**
 * Check, before the service starts, what {@link resolveLogKey} would refuse
 * (an unreadable or wrong key file, an origin that is not the key's, a
 * LEDGER_ORIGIN with a URL scheme), without
 * creating anything: the start fails with one readable line. Throws {@link LogKeyError}.
 */
export function checkLogKeyConfig(cfg: { keyFile?: string; origin?: string; databaseUrl: string }): void {
  if (cfg.origin !== undefined && !isValidKeyName(cfg.origin)) throw new LogKeyError('LEDGER_ORIGIN must be non-empty, without spaces or +');
  const scheme = cfg.origin !== undefined ? originSchemeProblem(cfg.origin) : null;
  if (scheme) throw new LogKeyError(scheme);
  const file = cfg.keyFile ?? (sqliteFile(cfg.databaseUrl) !== null ? defaultSigningKeyPath(sqliteFile(cfg.databaseUrl) as string) : null);
  if (file === null || (!cfg.keyFile && !existsSync(file))) return;
  const { signer } = readSigningKeyFile(file);
  if (cfg.origin !== undefined && cfg.origin !== signer.name) {
    throw new LogKeyError(`LEDGER_ORIGIN is ${cfg.origin} but the signing key ${file} is for ${signer.name}: a log keeps its origin (a new origin needs a new key: npm run ledger -- create-signing-key --out FILE --origin ${cfg.origin})`);
  }
}

/**
 * The log's signing key as the server would find it, read only (nothing is
 * created): LEDGER_SIGNING_KEY_FILE, else the SQLite database's default key
 * file. Throws {@link LogKeyError} when there is none to read (an in-memory
 * database, PostgreSQL without LEDGER_SIGNING_KEY_FILE, a SQLite log that
 * has not started yet), the file is not a log key, or LEDGER_ORIGIN is not
 * its name.
 */
export function readLogKey(cfg: { keyFile?: string; origin?: string; databaseUrl: string }): { signer: NoteSigner; path: string } {
  checkLogKeyConfig(cfg);
  const file = sqliteFile(cfg.databaseUrl);
  const path = cfg.keyFile || (file !== null ? defaultSigningKeyPath(file) : null);
  if (path === null) {
    throw new LogKeyError(
      cfg.databaseUrl.startsWith('sqlite:')
        ? 'an in-memory database has a key only for the life of its process: set DATABASE_URL to the ledger\'s database, or LEDGER_SIGNING_KEY_FILE'
        : 'no LEDGER_SIGNING_KEY_FILE: with PostgreSQL the log key is the file every replica is started with; set it',
    );
  }
  if (!cfg.keyFile && !existsSync(path)) throw new LogKeyError(`no log signing key at ${path} yet: start the ledger once on ${cfg.databaseUrl} (it creates the key), or set LEDGER_SIGNING_KEY_FILE`);
  return { signer: readSigningKeyFile(path).signer, path };
}
