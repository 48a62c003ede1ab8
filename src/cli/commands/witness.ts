/**
 * `aer1 witness create-key --name NAME --out FILE`: a new witness key
 * (Ed25519, cosignature type 0x04). The signer key
 * (`PRIVATE+KEY+<name>+<hex id>+<base64>`, a secret) goes to FILE, created
 * with mode 0600 and never overwritten; the vkey is printed on stdout.
 *
 * `aer1 witness serve --key FILE --log LOG_VKEY [--log ...] --state DIR --listen HOST:PORT`:
 * run a c2sp.org/tlog-witness witness (see src/witness/server.ts) for the
 * given logs (each vkey's name is its log's origin), keeping its state in
 * DIR. Logs one line per request on stderr; SIGTERM or SIGINT stop it
 * cleanly (exit 0).
 *
 * Exit codes: 0 done; 2 usage error, unreadable key, unusable state
 * directory, or the address cannot be bound.
 */
import { Command } from 'commander';
import { closeSync, fsyncSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { formatSignerKey, generateSignerKey, isValidKeyName, NoteVerifier, parseSignerKey, parseVerifierKey, SIG_COSIGNATURE_V1, SIG_ED25519 } from '../../core/tlog';
import { parseListen, startWitness } from '../../witness/server';
import { WitnessStateStore } from '../../witness/state';
import { CliError, CliIo, errorText, EXIT_OK, RunContext } from '../io';

/** Write a new witness key to `out` (mode 0600, refuses an existing file); returns the vkey. */
export function createWitnessKey(name: string, out: string): string {
  if (!isValidKeyName(name)) throw new CliError('--name must be non-empty, without spaces, control characters or +');
  const { signer } = generateSignerKey(name, SIG_COSIGNATURE_V1);
  let fd: number;
  try {
    fd = openSync(out, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new CliError(`${out} already exists; not overwriting a key`);
    throw new CliError(`cannot create ${out}: ${errorText(e)}`);
  }
  try {
    writeSync(fd, `${formatSignerKey(signer)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return signer.vkey;
}

/** Read a witness signer key file (type 0x04). Throws CliError; never shows key material. */
export function readWitnessKey(file: string, io?: CliIo) {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read the key ${file}: ${errorText(e)}`);
  }
  let signer;
  try {
    signer = parseSignerKey(text.trim());
  } catch (e) {
    throw new CliError(`${file} is not a signer key: ${errorText(e)}`);
  }
  if (signer.type !== SIG_COSIGNATURE_V1) throw new CliError(`${file} is not a witness key (type 0x04); make one with "aer1 witness create-key"`);
  try {
    if (io && (statSync(file).mode & 0o077) !== 0) io.stderr.write(`aer1: warning: ${file} is readable by other users; chmod 600 it\n`);
  } catch (_) {
    // stat failing after a successful read: nothing to warn about
  }
  return signer;
}

/** Parse the --log vkeys (type 0x01; the name is the origin). */
export function parseLogKeys(vkeys: readonly string[]): NoteVerifier[] {
  if (vkeys.length === 0) throw new CliError('at least one --log LOG_VKEY is required');
  return vkeys.map((v) => {
    let k: NoteVerifier;
    try {
      k = parseVerifierKey(v.trim());
    } catch (e) {
      throw new CliError(`--log ${JSON.stringify(v.slice(0, 80))} is not a vkey: ${errorText(e)}`);
    }
    if (k.type !== SIG_ED25519) throw new CliError(`--log ${k.name} is not a log key (type 0x01)`);
    return k;
  });
}

interface ServeOptions {
  key: string;
  log: string[];
  state: string;
  listen: string;
}

/** Run the witness until SIGTERM or SIGINT; resolves to the exit code. */
export async function serveWitness(opts: ServeOptions, io: CliIo, stop?: AbortSignal): Promise<number> {
  let listen: { host: string; port: number };
  try {
    listen = parseListen(opts.listen);
  } catch (e) {
    throw new CliError(errorText(e));
  }
  const signer = readWitnessKey(opts.key, io);
  const logs = parseLogKeys(opts.log);
  let store: WitnessStateStore;
  try {
    store = await WitnessStateStore.open(opts.state);
  } catch (e) {
    throw new CliError(`state directory ${opts.state}: ${errorText(e)}`);
  }
  const log = (line: string): void => void io.stderr.write(`aer1 witness: ${line}\n`);
  let w;
  try {
    w = await startWitness({ signer, logs, store, log }, listen.host, listen.port);
  } catch (e) {
    store.close();
    throw new CliError(`cannot listen on ${opts.listen}: ${errorText(e)}`);
  }
  const origins = [...new Set(logs.map((k) => k.name))];
  for (const o of origins) {
    const r = store.get(o);
    log(`log ${JSON.stringify(o)}: ${r ? `latest cosigned size ${r.size}` : 'nothing cosigned yet'}`);
  }
  log(`${signer.vkey} listening on ${w.url}`);
  await new Promise<void>((resolve) => {
    const done = (): void => {
      process.off('SIGTERM', done);
      process.off('SIGINT', done);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    process.on('SIGTERM', done);
    process.on('SIGINT', done);
    if (stop?.aborted) done();
    else stop?.addEventListener('abort', done);
  });
  log('stopping');
  await w.close();
  log('stopped');
  return EXIT_OK;
}

/** Register `witness create-key` and `witness serve` on `program`. */
export function registerWitness(program: Command, ctx: RunContext): void {
  const witness = program.command('witness').description('run a c2sp.org/tlog-witness witness that cosigns the checkpoints of logs');
  witness
    .command('create-key')
    .description('write a new witness key (mode 0600) and print its vkey (type 0x04)')
    .requiredOption('--name <name>', 'the witness key name, e.g. witness.example.org/auditor1')
    .requiredOption('--out <file>', 'where to write the private key (must not exist)')
    .action((opts: { name: string; out: string }) => {
      const vkey = createWitnessKey(opts.name, opts.out);
      ctx.io.stdout.write(`${vkey}\n`);
      ctx.exitCode = EXIT_OK;
    });
  witness
    .command('serve')
    .description('serve POST /add-checkpoint for the given logs')
    .requiredOption('--key <file>', 'the witness key file from create-key')
    .requiredOption('--log <vkey>', "a log's vkey (its name is the log origin); repeat for several logs", (v: string, prev: string[] = []) => [...prev, v])
    .requiredOption('--state <dir>', 'directory holding the latest cosigned checkpoint of each log')
    .requiredOption('--listen <host:port>', 'address to listen on, e.g. 127.0.0.1:7380')
    .action(async (opts: ServeOptions) => {
      ctx.exitCode = await serveWitness(opts, ctx.io);
    });
}
