/**
 * A real Nostr relay for the tests, in this process on 127.0.0.1: the
 * protocol (EVENT/OK, REQ/EOSE, id and signature checks) is
 * @nostr-relay/core's (npm, CodyTseng/nostr-relay), its message parsing
 * @nostr-relay/validator's, its WebSocket server `ws`'s. Only the event
 * store is ours: an array (the package's SQLite store needs another
 * better-sqlite3 major than this project's), matched with the package's own
 * filter code. `refuse` makes the relay answer OK false (its plugin hook),
 * as a relay with a write policy does.
 */
import { AddressInfo } from 'node:net';
import { createOutgoingNoticeMessage, EventRepository, EventUtils, type Event, type Filter } from '@nostr-relay/common';
import { NostrRelay } from '@nostr-relay/core';
import { Validator } from '@nostr-relay/validator';
import { WebSocketServer } from 'ws';

class MemoryEvents extends EventRepository {
  readonly events: Event[] = [];
  isSearchSupported(): boolean {
    return false;
  }
  upsert(event: Event): { isDuplicate: boolean } {
    if (this.events.some((e) => e.id === event.id)) return { isDuplicate: true };
    this.events.push(event);
    return { isDuplicate: false };
  }
  find(filter: Filter): Event[] {
    return this.events.filter((e) => EventUtils.isMatchingFilter(e, filter)).slice(0, filter.limit ?? 500);
  }
  async destroy(): Promise<void> {}
}

export interface TestRelay {
  url: string;
  port: number;
  /** Every event the relay stored. */
  events: Event[];
  /** true: answer every EVENT with OK false ("blocked: ..."). */
  refuse: boolean;
  close(): Promise<void>;
}

/** Start a relay on 127.0.0.1 (`port` 0: any free port). */
export async function startRelay(port = 0): Promise<TestRelay> {
  const store = new MemoryEvents();
  const relay = new NostrRelay(store);
  const validator = new Validator();
  const state = { refuse: false };
  relay.register({ beforeHandleEvent: () => (state.refuse ? { canHandle: false, message: 'blocked: this relay does not accept events from this key' } : { canHandle: true }) });
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', () => resolve());
    wss.once('error', reject);
  });
  wss.on('connection', (ws) => {
    relay.handleConnection(ws);
    ws.on('message', (data) => {
      void (async () => {
        try {
          await relay.handleMessage(ws, await validator.validateIncomingMessage(data));
        } catch (e) {
          ws.send(JSON.stringify(createOutgoingNoticeMessage((e as Error).message)));
        }
      })();
    });
    ws.on('close', () => relay.handleDisconnect(ws));
  });
  const actual = (wss.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${actual}`,
    port: actual,
    events: store.events,
    get refuse() {
      return state.refuse;
    },
    set refuse(v: boolean) {
      state.refuse = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
}
