/**
 * `aer1 ledger verify --database <sqlite file | postgres URL> [--json]`:
 * recompute the ledger's own hash chain straight from a database, without
 * the service; names the first position that does not verify.
 */
import { Command } from 'commander';
import { verifyLedgerDatabase } from '../../ledger/offline-verify';
import { CliError, CliIo, errorText, EXIT_NOT_VALID, EXIT_OK, OutputWriter, RunContext } from '../io';

/** Run `aer1 ledger verify`; returns the exit code (0 verifies, 1 does not, 2 cannot open). */
export async function ledgerVerify(database: string, opts: { json?: boolean }, io: CliIo): Promise<number> {
  let report;
  try {
    report = await verifyLedgerDatabase(database);
  } catch (e) {
    throw new CliError(`cannot read the ledger in ${database.replace(/\/\/[^@/]*@/, '//***@')}: ${errorText(e)}`);
  }
  const out = new OutputWriter(io.stdout);
  try {
    if (opts.json) await out.write(`${JSON.stringify(report, null, 2)}\n`);
    else {
      await out.write(`Ledger chain: ${report.ok ? 'VERIFIES' : 'DOES NOT VERIFY'}\n`);
      await out.write(`  events checked: ${report.checked}\n`);
      if (report.head) await out.write(`  head: position ${report.head.position}, event_hash ${report.head.event_hash}\n`);
      if (report.first_failure) await out.write(`  first failure: position ${report.first_failure.position} (${report.first_failure.reason}): ${report.first_failure.detail}\n`);
      await out.write('  Not proven: that no newest events were removed; compare the head with one published earlier.\n');
    }
    await out.end();
  } finally {
    out.detach();
  }
  return report.ok ? EXIT_OK : EXIT_NOT_VALID;
}

/** Register `ledger verify` on `program`. */
export function registerLedger(program: Command, ctx: RunContext): void {
  const ledger = program.command('ledger').description("check a ledger database's own hash chain");
  ledger
    .command('verify')
    .description('recompute the ledger hash chain from a SQLite file or a PostgreSQL URL')
    .requiredOption('--database <db>', 'SQLite file (or sqlite:<path>) or postgres:// URL')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { database: string; json?: boolean }) => {
      ctx.exitCode = await ledgerVerify(opts.database, opts, ctx.io);
    });
}
