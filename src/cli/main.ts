/**
 * `aer1`: the offline AER-1 verifier.
 *
 * {@link run} takes the arguments (without `node` and the script) and the
 * streams to use and resolves to the exit code; it never calls
 * `process.exit`, never throws, and never prints a stack trace: every error
 * becomes one `aer1: ...` line on stderr. {@link main} wires it to the
 * process; it runs on load when this file is the entry point or is required
 * by the `bin/aer1` wrapper.
 */
import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands';
import { CliError, CliIo, errorText, EXIT_OK, EXIT_USAGE, firstLine, OutputClosedError, RunContext } from './io';
import { packageVersion } from './paths';

export type { CliIo } from './io';
export { EXIT_NOT_VALID, EXIT_OK, EXIT_USAGE } from './io';

/** Build the command tree for one run, writing to `ctx.io`. */
export function buildProgram(ctx: RunContext): Command {
  const { io } = ctx;
  const program = new Command('aer1');
  program
    .description('Offline verifier for AER-1 receipts, hash-chained job timelines, endpoint commitments and workflow receipts (draft-zambo-aer1-07).')
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      // Commander's errors ("error: unknown option '--x'\n(Did you mean --y?)") as one line.
      outputError: (s, write) => write(`aer1: ${firstLine(s.replace(/^error: /, ''))}\n`),
      getOutHelpWidth: () => 100,
      getErrHelpWidth: () => 100,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .addHelpText(
      'after',
      `
Exit codes: 0 valid; 1 invalid, historical or incomplete (conformance: a
vector failed); 2 usage error, or input that cannot be read or parsed.
Run "aer1 <command> --help" for a command's options.`,
    );
  for (const register of COMMANDS) register(program, ctx);
  return program;
}

/**
 * Run the CLI with `argv` (user arguments only, e.g. `['verify', 'r.json']`)
 * on the given streams. Resolves to the exit code.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const ctx: RunContext = { io, exitCode: EXIT_OK };
  try {
    const program = buildProgram(ctx);
    await program.parseAsync([...argv], { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every other commander exit (unknown option or
      // command, missing argument, bad choice, help shown because no command was
      // given) is a usage error. Its one-line message was written by outputError.
      return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (err instanceof OutputClosedError) return EXIT_USAGE; // the reader went away: nothing left to say
    try {
      if (err instanceof CliError) {
        io.stderr.write(`aer1: ${firstLine(err.message)}\n`);
        return err.exitCode;
      }
      io.stderr.write(`aer1: internal error: ${errorText(err)}\n`);
    } catch {
      // stderr is gone too
    }
    return EXIT_USAGE;
  }
}

let started = false;

/** Run with the process's arguments and streams and set `process.exitCode`. */
export function main(): void {
  if (started) return;
  started = true;
  // A closed pipe (aer1 ... | head) must not crash the process with an unhandled 'error'.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    // Lazy: touching process.stdin opens it, which is needed only for "-".
    get stdin() {
      return process.stdin;
    },
  };
  run(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    () => {
      process.exitCode = EXIT_USAGE;
    },
  );
}

/** True when this module is the entry point, or is required by the `bin/aer1` wrapper. */
function isEntryPoint(): boolean {
  const m = require.main;
  if (!m) return false;
  return m === module || /[\\/]aer1(\.c?js)?$/.test(m.filename);
}

if (isEntryPoint()) main();
