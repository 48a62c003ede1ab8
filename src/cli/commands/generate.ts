/**
 * `aer1 generate timeline --entries N [--job ID] [--format ndjson|array]`
 * `aer1 generate batch --lines N [--tamper-every K]`
 *
 * Streams generated documents to stdout (with backpressure), for
 * benchmarks and memory checks of `verify`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { batchLines, timelineText } from '../generate';
import { CliError, CliIo, EXIT_OK, OutputWriter, RunContext } from '../io';

function count(min: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number of at least ${min}`);
    return n;
  };
}

async function pipeOut(chunks: Iterable<string>, io: CliIo): Promise<number> {
  const out = new OutputWriter(io.stdout);
  try {
    for (const c of chunks) await out.write(c);
    await out.end();
  } finally {
    out.detach();
  }
  return EXIT_OK;
}

/** Register `generate` and its subcommands on `program`. */
export function registerGenerate(program: Command, ctx: RunContext): void {
  const gen = program.command('generate').description('write generated, valid AER-1 documents to stdout (benchmarks, memory checks)');
  gen
    .command('timeline')
    .description('a valid -07 timeline (S7.1): seq 1..N, closed by the last entry')
    .requiredOption('--entries <n>', 'number of entries', count(1))
    .option('--job <id>', 'job_id of every entry', 'job-generated')
    .addOption(new Option('--format <format>', 'ndjson: one entry per line; array: a JSON array').choices(['ndjson', 'array']).default('ndjson'))
    .action(async (opts: { entries: number; job: string; format: 'ndjson' | 'array' }) => {
      if (opts.job.length === 0) throw new CliError('--job must not be empty');
      ctx.exitCode = await pipeOut(timelineText({ entries: opts.entries, job: opts.job, format: opts.format }), ctx.io);
    });
  gen
    .command('batch')
    .description('an NDJSON input for `aer1 verify --batch`: receipts (both forms), timelines and workflows')
    .requiredOption('--lines <n>', 'number of lines', count(1))
    .option('--tamper-every <k>', 'make every k-th line an invalid receipt (output_hash_mismatch); 0: none', count(0), 0)
    .action(async (opts: { lines: number; tamperEvery: number }) => {
      ctx.exitCode = await pipeOut(batchLines({ lines: opts.lines, tamperEvery: opts.tamperEvery }), ctx.io);
    });
}
