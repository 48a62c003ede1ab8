/**
 * `aer1 gateway (--upstream URL [--upstream-header H] | --stdio -- COMMAND ARGS...) [--listen HOST:PORT] [--job ID]
 *  [--on-ledger-down refuse|queue] [--spool FILE] [--retry-ms N] [--no-close-on-exit]`
 *
 * An MCP proxy that records every `tools/call` in the ledger as an
 * `OBSERVED VIA GATEWAY` receipt (docs/gateway.md), and closes the jobs
 * of a session when it ends (unless `--no-close-on-exit`). Ledger and key from
 * AER1_SERVER and AER1_KEY (a producer key created with `--gateway`). The
 * proxy is loaded only when this command runs, so the verifier's start-up
 * does not load the MCP SDK. Runs until SIGINT or SIGTERM (stdio: until the
 * agent closes stdin); exit 0, or 2 for a usage error or a gateway that
 * cannot start.
 */
import { Command, Option } from 'commander';
import { CliError, RunContext } from '../io';

interface GatewayFlags {
  upstream?: string;
  upstreamHeader: string[];
  stdio?: boolean;
  listen?: string;
  job?: string;
  onLedgerDown: 'refuse' | 'queue';
  spool: string;
  retryMs: string;
  closeOnExit: boolean;
}

export function registerGateway(program: Command, ctx: RunContext): void {
  program
    .command('gateway')
    .description('MCP proxy: forward tools/call to a tool server and record each answer in the ledger as an OBSERVED VIA GATEWAY receipt (result._receipt)')
    .argument('[command...]', 'with --stdio: the tool server command and its arguments, after --')
    .option('--upstream <url>', 'the tool server over Streamable HTTP')
    .option('--upstream-header <name: value>', 'a header sent to the --upstream server on every request (e.g. its Authorization); repeat for each', (v: string, all: string[]) => [...all, v], [])
    .option('--stdio', 'start the tool server given after -- and speak stdio to it')
    .option('--listen <host:port>', 'serve agents over Streamable HTTP at http://HOST:PORT/mcp (default: stdio on this process)')
    .option('--job <id>', 'record every call in this job (else X-AER1-Job, params._meta["aer1/job_id"], else the MCP session id)')
    .addOption(new Option('--on-ledger-down <mode>', 'refuse the call, or forward it and queue the receipt in the spool').choices(['refuse', 'queue']).default('refuse'))
    .option('--spool <file>', 'the spool file of --on-ledger-down queue', 'aer1-gateway.spool')
    .option('--retry-ms <ms>', 'milliseconds between deliveries of spooled receipts', '2000')
    .option('--no-close-on-exit', 'keep the jobs open when a session ends (the job continues across sessions); by default each job a session recorded in is closed (POST /api/jobs/{id}/close) when it ends')
    .addHelpText('after', '\nEnvironment: AER1_SERVER (the ledger, default http://localhost:3000) and AER1_KEY (a producer key created with --gateway).')
    .action(async (command: string[], flags: GatewayFlags) => {
      if ((flags.upstream === undefined) === (flags.stdio !== true)) throw new CliError('give either --upstream URL or --stdio -- COMMAND ARGS...');
      if (flags.stdio && command.length === 0) throw new CliError('--stdio needs the tool server command after --');
      if (flags.upstream !== undefined && command.length > 0) throw new CliError(`unexpected arguments: ${command.join(' ')}`);
      const headers: Record<string, string> = {};
      for (const h of flags.upstreamHeader) {
        const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(h);
        if (!m) throw new CliError(`--upstream-header must be "Name: value", got ${JSON.stringify(h)}`);
        headers[m[1]] = m[2];
      }
      const key = process.env.AER1_KEY;
      if (!key) throw new CliError('AER1_KEY is not set: the gateway needs a producer key created with --gateway');
      const retryMs = Number(flags.retryMs);
      if (!Number.isSafeInteger(retryMs) || retryMs < 10) throw new CliError('--retry-ms must be an integer of at least 10');
      const { startGateway } = await import('../gateway/gateway');
      let gw;
      try {
        gw = await startGateway({
          server: process.env.AER1_SERVER || 'http://localhost:3000',
          key,
          upstream: flags.upstream !== undefined ? { url: flags.upstream, headers } : { command: command[0], args: command.slice(1) },
          listen: flags.listen,
          job: flags.job,
          onLedgerDown: flags.onLedgerDown,
          spool: flags.spool,
          retryMs,
          closeOnExit: flags.closeOnExit,
          warn: (line) => void ctx.io.stderr.write(line + '\n'),
        });
      } catch (err) {
        throw new CliError(`the gateway cannot start: ${(err as Error).message}`);
      }
      if (gw.url) ctx.io.stderr.write(`aer1 gateway: serving ${gw.url}\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
        void gw.done.then(resolve);
      });
      await gw.close();
    });
}
