/**
 * Publishing one event to one Nostr relay (NIP-01: the client sends
 * `["EVENT", <event>]`, the relay answers `["OK", <event id>, <true|false>,
 * <message>]`), over `ws`. Small on purpose, after an attack on the
 * nostr-tools Relay it replaces (issue 33): a relay that never finished its
 * handshake kept its socket open for good; an `OK` whose third member was any
 * truthy value counted as accepted and a missing message threw later; a
 * relay's NOTICE went raw to stdout. Here the socket is always terminated,
 * only a literal `true` is an acceptance, and a relay's text is returned as
 * data (cut to {@link MAX_RELAY_TEXT} characters), never printed.
 */
import WebSocket from 'ws';

/** The relay's answer to one publish. */
export interface RelayAnswer {
  /** True only for `["OK", <this event id>, true, ...]`. */
  ok: boolean;
  /** The relay's message (OK's fourth member, possibly empty), or why there was no OK (timeout, connection error, refusal). */
  message: string;
  /** NOTICE texts the relay sent meanwhile (at most 5, each cut to {@link MAX_RELAY_TEXT}). */
  notices: string[];
}

/** Characters kept of any text a relay sends. */
export const MAX_RELAY_TEXT = 500;
/** Largest frame accepted from a relay, in bytes (an OK or NOTICE is tiny; a relay sending more is cut off). */
const MAX_RELAY_FRAME = 64 * 1024;

const cut = (s: string): string => (s.length > MAX_RELAY_TEXT ? s.slice(0, MAX_RELAY_TEXT) : s);

/**
 * Send `event` (an object with a string `id`) to the relay at `url` and
 * wait for its OK, at most `timeoutMs` for the whole exchange (connect,
 * handshake, answer). Never rejects: every failure is an answer with
 * `ok: false` and its reason. The socket is terminated before it resolves.
 */
export function publishToRelay(url: string, event: { id: string }, timeoutMs: number): Promise<RelayAnswer> {
  return new Promise<RelayAnswer>((resolve) => {
    const notices: string[] = [];
    let settled = false;
    let ws: WebSocket | null = null;
    const finish = (ok: boolean, message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        ws?.terminate();
      } catch {
        // already gone
      }
      resolve({ ok, message: cut(message), notices });
    };
    const timer = setTimeout(() => finish(false, `no OK within ${timeoutMs} ms`), timeoutMs);
    try {
      ws = new WebSocket(url, { handshakeTimeout: timeoutMs, maxPayload: MAX_RELAY_FRAME, followRedirects: false });
    } catch (e) {
      finish(false, `cannot connect: ${(e as Error).message}`);
      return;
    }
    ws.on('open', () => ws!.send(JSON.stringify(['EVENT', event]), (err) => err && finish(false, `send failed: ${err.message}`)));
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (isBinary) return;
      let msg: unknown;
      try {
        msg = JSON.parse(data.toString());
      } catch {
        return; // not NIP-01: ignored, as relays ignore what they do not understand
      }
      if (!Array.isArray(msg)) return;
      if (msg[0] === 'NOTICE' && typeof msg[1] === 'string' && notices.length < 5) notices.push(cut(msg[1]));
      if (msg[0] === 'OK' && msg[1] === event.id) {
        const text = typeof msg[3] === 'string' ? msg[3] : '';
        if (msg[2] === true) finish(true, text);
        else finish(false, msg[2] === false ? text || 'refused' : `not accepted: OK's third member is ${JSON.stringify(msg[2] ?? null).slice(0, 40)}, not true`);
      }
    });
    ws.on('unexpected-response', (_req, res) => finish(false, `the relay answered HTTP ${res.statusCode ?? '?'} instead of a WebSocket handshake`));
    ws.on('error', (e: Error) => finish(false, e.message || 'connection error'));
    ws.on('close', (code: number) => finish(false, `connection closed (${code}) before an OK`));
  });
}
