/**
 * One proxied MCP session: messages from the agent (downstream) go to the
 * tool server (upstream) as they are, and back. A `tools/call` answer
 * becomes a receipt ({@link gatewayReceipt}) over the exact text of the
 * upstream's `result` (or `error`) member, recorded in the ledger and
 * appended to the job's timeline before the agent gets the answer with the
 * receipt as `result._receipt` (or `error.data._receipt`). When the ledger
 * cannot record it the call is refused with a JSON-RPC error naming the
 * cause, or (queue mode) the receipt is spooled and the answer sent.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { LedgerClient, LedgerDownError, LedgerRefusedError } from './ledger-client';
import { CallStatus, gatewayReceipt, GatewayReceipt } from './receipt';
import { Spool } from './spool';
import { idKey, RawResults } from './upstream';

/** JSON-RPC error code of a call the gateway refused because the ledger could not record it (implementation-defined range). */
export const LEDGER_UNAVAILABLE = -32050;

export interface SessionOptions {
  /** `--job`: every call of every session goes to this job. */
  job?: string;
  /** `queue`: spool receipts the ledger cannot take; `refuse` (default): refuse the call. */
  onLedgerDown: 'refuse' | 'queue';
  /**
   * Close the timeline of every job a session recorded calls in when the
   * session ends (default true); false (`--no-close-on-exit`): the job
   * continues across sessions, closed by something else.
   */
  closeOnExit?: boolean;
}

interface PendingCall {
  id: RequestId;
  tool: string;
  job: string;
}

export class GatewaySession {
  private readonly calls = new Map<string, PendingCall>();
  /** Agent-to-server messages are forwarded in the order they arrived (a check of the ledger may delay one). */
  private forwarding: Promise<unknown> = Promise.resolve();
  private initializeId: string | null = null;
  /** The jobs this session recorded (or spooled) calls in: closed when it ends (see {@link SessionOptions.closeOnExit}). */
  readonly jobs = new Set<string>();

  constructor(
    private readonly down: Transport,
    private readonly up: Transport,
    private readonly raw: RawResults,
    private readonly ledger: LedgerClient,
    private readonly spool: Spool | null,
    private readonly options: SessionOptions,
    /** The session's id for job ids: the downstream MCP session id, else one made for this session. */
    private readonly sessionId: () => string,
    private readonly warn: (line: string) => void,
  ) {
    down.onmessage = (m, extra) => {
      this.forwarding = this.forwarding.then(() => this.fromAgent(m, extra)).catch((err) => this.warn(`aer1 gateway: ${(err as Error).message}`));
    };
    up.onmessage = (m) => void this.fromServer(m).catch((err) => this.warn(`aer1 gateway: ${(err as Error).message}`));
    up.onerror = (err) => {
      if (!/AbortError|aborted/.test(err.message)) this.warn(`aer1 gateway: upstream: ${err.message}`); // a stream we closed ourselves is no news
    };
  }

  /** The job of a call: `--job`, the `X-AER1-Job` header, `params._meta["aer1/job_id"]`, else the MCP session id. */
  private jobOf(params: Record<string, unknown> | undefined, extra?: MessageExtraInfo): string {
    if (this.options.job) return this.options.job;
    const header = extra?.requestInfo?.headers?.['x-aer1-job'];
    const h = Array.isArray(header) ? header[0] : header;
    if (typeof h === 'string' && h !== '') return h;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const m = meta?.['aer1/job_id'];
    if (typeof m === 'string' && m !== '') return m;
    return this.sessionId();
  }

  private async fromAgent(m: JSONRPCMessage, extra?: MessageExtraInfo): Promise<void> {
    if (isJSONRPCRequest(m) && m.method === 'initialize') this.initializeId = idKey(m.id);
    if (isJSONRPCRequest(m) && m.method === 'tools/call') {
      const params = m.params as Record<string, unknown> | undefined;
      const call: PendingCall = { id: m.id, tool: typeof params?.name === 'string' ? params.name : '', job: this.jobOf(params, extra) };
      // Check the ledger first while it has not answered (refuse mode), and read the head of a job not seen yet (a closed job is refused unforwarded).
      if (this.ledger.healthy ? !this.ledger.knows(call.job) : this.options.onLedgerDown === 'refuse') {
        try {
          await this.ledger.probe(call.job);
        } catch (err) {
          // Queue mode forwards through an outage (the receipt is spooled); a refusal by the ledger is never forwarded.
          if (this.options.onLedgerDown === 'refuse' || err instanceof LedgerRefusedError) return this.refuse(call, `not forwarded: ${(err as Error).message}`);
        }
      }
      if (this.ledger.isClosed(call.job)) {
        return this.refuse(call, `not forwarded: the timeline of job ${JSON.stringify(call.job)} is closed (409 timeline_closed); a closed job takes no more calls: use another job id, or --no-close-on-exit for a job that continues across sessions`, 'timeline_closed');
      }
      this.calls.set(idKey(m.id), call);
    }
    try {
      await this.up.send(m);
    } catch (err) {
      if (!isJSONRPCRequest(m)) throw err;
      // The agent waits for an answer: say why none will come.
      this.calls.delete(idKey(m.id));
      await this.down.send({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: `aer1 gateway: the tool server cannot be reached: ${(err as Error).message}` } }, { relatedRequestId: m.id });
    }
  }

  /** Answer the call with the JSON-RPC error {@link LEDGER_UNAVAILABLE}: `why` in its message, `reason` in its data. */
  private async refuse(call: PendingCall, why: string, reason = 'ledger_unavailable'): Promise<void> {
    await this.down.send(
      { jsonrpc: '2.0', id: call.id, error: { code: LEDGER_UNAVAILABLE, message: `aer1 gateway: the ledger cannot record this call (${why})`, data: { reason, job_id: call.job } } },
      { relatedRequestId: call.id },
    );
  }

  private async fromServer(m: JSONRPCMessage): Promise<void> {
    // The version the two sides agreed: the HTTP upstream sends it as MCP-Protocol-Version from now on.
    if (isJSONRPCResultResponse(m) && idKey(m.id) === this.initializeId && typeof m.result.protocolVersion === 'string') this.up.setProtocolVersion?.(m.result.protocolVersion);
    const call = (isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m)) && m.id !== undefined ? this.calls.get(idKey(m.id)) : undefined;
    if (!call) {
      if ((isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m)) && m.id !== undefined) this.raw.take(m.id);
      await this.down.send(m, 'id' in m && m.id !== undefined && !isJSONRPCRequest(m) ? { relatedRequestId: m.id } : undefined);
      return;
    }
    this.calls.delete(idKey(call.id));
    const captured = this.raw.take(call.id);
    if (!captured) {
      await this.refuse(call, 'the gateway did not see the bytes of the answer; it records only what it observed');
      return;
    }
    let status: CallStatus = 'jsonrpc_error';
    if (isJSONRPCResultResponse(m)) status = (m.result as { isError?: unknown }).isError === true ? 'tool_error' : 'ok';
    const receipt = gatewayReceipt(call.tool, call.job, captured.text, status);
    if (!(await this.record(call, receipt))) return;
    if (isJSONRPCResultResponse(m)) {
      await this.down.send({ ...m, result: { ...m.result, _receipt: receipt } }, { relatedRequestId: call.id });
    } else if (isJSONRPCErrorResponse(m)) {
      const data = m.error.data;
      const withReceipt = data === undefined || (typeof data === 'object' && data !== null && !Array.isArray(data)) ? { ...(data as object | undefined), _receipt: receipt } : data;
      await this.down.send({ ...m, error: { ...m.error, data: withReceipt } }, { relatedRequestId: call.id });
    }
  }

  /** Record the receipt, or spool it; false when the call was refused instead. */
  private async record(call: PendingCall, receipt: GatewayReceipt): Promise<boolean> {
    this.jobs.add(call.job);
    if (this.spool?.holds(call.job)) {
      this.spool.add(call.job, receipt); // earlier calls of the job wait in the spool: keep the order
      return true;
    }
    try {
      // The receipt and its timeline entry are independent writes (the entry carries the bytes too): both at once.
      const [receiptWrite, entryWrite] = await Promise.allSettled([this.ledger.recordReceipt(receipt, JSON.stringify(receipt)), this.ledger.append(call.job, receipt)]);
      if (receiptWrite.status === 'rejected') throw receiptWrite.reason;
      if (entryWrite.status === 'rejected') throw entryWrite.reason;
      return true;
    } catch (err) {
      if (err instanceof LedgerDownError && this.spool) {
        this.spool.add(call.job, receipt);
        return true;
      }
      await this.refuse(call, `the tool server answered, the answer is withheld: ${(err as Error).message}`);
      return false;
    }
  }

  /** Close both sides. */
  async close(): Promise<void> {
    await Promise.allSettled([this.up.close(), this.down.close()]);
  }
}
