/**
 * `aer1 ledger verify --database <sqlite file | postgres URL> [--json]`:
 * recompute the ledger's own hash chain straight from a database, without
 * the service; names the first position that does not verify. Then audits
 * every projection table against the events and lists every failing table
 * with its first failure. Exit 1 when either fails.
 */
import { Command } from 'commander';
import { visibleSegments } from '../../core/text';
import { CliError, CliIo, errorText, EXIT_NOT_VALID, EXIT_OK, OutputWriter, RunContext } from '../io';
import { safe } from '../report';

/**
 * JSON text with every code point a terminal would act on or hide written
 * as a JSON `\\u` escape (JSON.stringify leaves C1 controls such as U+009B
 * CSI and bidi controls raw): the same document, safe to print.
 */
export function terminalSafeJson(json: string): string {
  // Line feeds outside strings are the document's layout; JSON.stringify already escaped those inside.
  return visibleSegments(json, [0x0a])
    .map((g) => {
      if ('text' in g) return g.text;
      const units = String.fromCodePoint(g.codePoint);
      return [...Array(units.length).keys()].map((i) => '\\u' + units.charCodeAt(i).toString(16).padStart(4, '0')).join('');
    })
    .join('');
}

/** Positions of an erased list, as text, saying how many more were not listed. */
function listed(l: { count: number; positions: number[] }): string {
  return l.positions.join(', ') + (l.count > l.positions.length ? ` and ${l.count - l.positions.length} more` : '');
}

/** Run `aer1 ledger verify`; returns the exit code (0 verifies, 1 does not, 2 cannot open). */
export async function ledgerVerify(database: string, opts: { json?: boolean }, io: CliIo): Promise<number> {
  let report;
  try {
    // Loaded here, for this command alone: the database code (TypeORM, drivers, migrations) is no part of the offline verifier.
    const { verifyLedgerDatabase } = await import('../../ledger/offline-verify');
    report = await verifyLedgerDatabase(database);
  } catch (e) {
    throw new CliError(`cannot read the ledger in ${safe(database.replace(/\/\/[^@/]*@/, '//***@'), 400)}: ${safe(errorText(e), 1000)}`);
  }
  const out = new OutputWriter(io.stdout);
  try {
    // Everything below that came from the database (hashes, reasons, details) is escaped before it reaches the terminal.
    if (opts.json) await out.write(`${terminalSafeJson(JSON.stringify(report, null, 2))}\n`);
    else {
      await out.write(`Ledger chain: ${report.chain_ok ? 'VERIFIES' : 'DOES NOT VERIFY'}\n`);
      await out.write(`  events checked: ${report.checked}\n`);
      if (report.head) await out.write(`  head: position ${report.head.position}, event_hash ${safe(String(report.head.event_hash), 200)}\n`);
      if (report.first_failure) await out.write(`  first failure: position ${report.first_failure.position} (${safe(String(report.first_failure.reason))}): ${safe(String(report.first_failure.detail), 2000)}\n`);
      // Issue 29: erased payloads are named, never passed silently (docs/event-formats.md).
      const er = report.erased;
      if (er.payload_erased.count > 0) await out.write(`  payloads erased (format 3: leaf recomputed and checked, the payload can no longer be): ${er.payload_erased.count}, at positions ${listed(er.payload_erased)}\n`);
      if (er.leaf_not_recomputed.count > 0) {
        await out.write(`  leaves not recomputed (format 1/2, content erased: the stored event_hash is taken as it stands, linked by the next prev_hash): ${er.leaf_not_recomputed.count}, at positions ${listed(er.leaf_not_recomputed)}\n`);
      }
      await out.write('  Not proven: that no newest events were removed; compare the head with one published earlier.\n');
      const p = report.projections;
      await out.write(`Read models: ${p.ok ? 'MATCH THE EVENTS' : 'DO NOT MATCH THE EVENTS'} (as of position ${p.as_of_position}, ${p.events_replayed} events replayed)\n`);
      if (p.replay_failure) await out.write(`  replay failure: position ${p.replay_failure.position} (${safe(p.replay_failure.type)}): ${safe(p.replay_failure.detail, 1000)}\n`);
      for (const t of p.tables) {
        if (t.ok) {
          await out.write(`  ${t.table}: ok, ${t.rows_checked} rows\n`);
          continue;
        }
        const f = t.first_failure;
        await out.write(`  ${t.table}: FAILS, ${t.failures} of ${t.rows_checked} rows\n`);
        if (f) {
          const where = f.position === null ? `key ${safe(JSON.stringify(f.key), 400)}` : `position ${f.position}, key ${safe(JSON.stringify(f.key), 400)}`;
          await out.write(`    first failure: ${where} (${f.kind}${f.column ? ` ${safe(f.column)}` : ''}): ${safe(f.detail, 1000)}\n`);
        }
      }
      await out.write(`Verdict: ${report.ok ? 'valid' : 'invalid'}\n`);
    }
    await out.end();
  } finally {
    out.detach();
  }
  return report.ok ? EXIT_OK : EXIT_NOT_VALID;
}

/** Register `ledger verify` on `program`. */
export function registerLedger(program: Command, ctx: RunContext): void {
  const ledger = program.command('ledger').description("check a ledger database's own hash chain and its read models");
  ledger
    .command('verify')
    .description('recompute the ledger hash chain and audit every read-model row, from a SQLite file or a PostgreSQL URL')
    .requiredOption('--database <db>', 'SQLite file (or sqlite:<path>) or postgres:// URL')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { database: string; json?: boolean }) => {
      ctx.exitCode = await ledgerVerify(opts.database, opts, ctx.io);
    });
}
