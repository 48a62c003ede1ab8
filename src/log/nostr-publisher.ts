import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { finalizeEvent, type Event as NostrEvent } from 'nostr-tools';
import { AppConfig } from '../config/configuration';
import { anchorEventTemplate } from '../core/nostr/anchor';
import { DatabaseService } from '../database/database.service';
import { LogIdentityService } from './log-identity.service';
import { LogService } from './log.service';
import { NostrAnchors } from './nostr-anchors.service';
import { publicRelayUrl } from './nostr-config';
import { publishToRelay } from './nostr-relay-client';
import { NostrRepository, StoredNostrAnchor } from './nostr.repository';

/** First retry delay after a relay refused or could not be reached, in ms, doubled per failure up to 5 minutes. */
const NOSTR_BACKOFF_MS = 1000;
const NOSTR_MAX_BACKOFF_MS = 300_000;
/** How long one relay may take to connect and answer OK, in ms. */
const RELAY_TIMEOUT_MS = 5000;

/** What /health shows of one relay. */
export interface NostrRelayHealth {
  url: string;
  /** `ok`: it accepted the newest anchor; `failing`: its last attempt failed (retried with backoff); `pending`: not tried yet. */
  status: 'ok' | 'failing' | 'pending';
  /** Size and time (RFC 3339 UTC) of the newest anchor this relay accepted, or nulls. */
  last_ok_size: number | null;
  last_ok_at: string | null;
  /** The last refusal or failure (cleared by the next OK), and when it is tried again. */
  last_error?: string;
  retry_at?: string;
}

/** What /health shows of the Nostr anchors. */
export interface NostrHealth {
  publisher_key: string;
  npub: string;
  /** The newest anchored checkpoint's size, its event id and creation time, or nulls. */
  anchored_size: number | null;
  event_id: string | null;
  created_at: string | null;
  relays: NostrRelayHealth[];
}

interface RelayState {
  failures: number;
  retryAt: number;
  lastError: string | null;
  lastOk: { size: number; at: string } | null;
}

/**
 * Nostr anchors (issue 33, docs/nostr.md): when NOSTR_RELAYS and
 * NOSTR_KEY_FILE are set, the checkpoint readers are served (`GET
 * /checkpoint`: the newest witnessed one with witnesses configured) is
 * published at most every NOSTR_INTERVAL_MS as one NIP-01 event signed by
 * the publisher key, its content the note exactly as served
 * ({@link anchorEventTemplate}). The event is stored first, then sent to
 * every relay; each answer (OK true, OK false with the relay's message, or
 * no answer) is stored. A relay that did not accept the newest anchor is
 * tried again with backoff (1 s doubling to 5 min). Runs on its own timer
 * outside every transaction: a relay that is slow, down or refuses never
 * delays checkpoints or writes.
 */
@Injectable()
export class NostrPublisher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('NostrPublisher');
  private readonly repo = new NostrRepository();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly relays = new Map<string, RelayState>();
  private newest: StoredNostrAnchor | null = null;

  constructor(
    private readonly db: DatabaseService,
    private readonly identity: LogIdentityService,
    private readonly log: LogService,
    private readonly anchors: NostrAnchors,
    private readonly config: ConfigService<AppConfig, true>,
  ) {
    for (const url of anchors.settings?.relays ?? []) this.relays.set(url, { failures: 0, retryAt: 0, lastError: null, lastOk: null });
  }

  onApplicationBootstrap(): void {
    if (!this.identity.current || !this.anchors.settings) return;
    const every = Math.max(100, Math.min(this.config.get('CHECKPOINT_INTERVAL_MS', { infer: true }), 1000));
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
    void this.tick();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** The anchors for /health; null without NOSTR_RELAYS. */
  health(): NostrHealth | null {
    const s = this.anchors.settings;
    if (!s) return null;
    const n = this.newest;
    return {
      publisher_key: s.pubkey,
      npub: s.npub,
      anchored_size: n?.size ?? null,
      event_id: n?.event_id ?? null,
      created_at: n?.created_at ?? null,
      relays: [...this.relays.entries()].map(([url, r]) => ({
        url: publicRelayUrl(url),
        status: r.lastError ? 'failing' : r.lastOk && n && r.lastOk.size === n.size ? 'ok' : 'pending',
        last_ok_size: r.lastOk?.size ?? null,
        last_ok_at: r.lastOk?.at ?? null,
        ...(r.lastError ? { last_error: r.lastError, retry_at: new Date(r.retryAt).toISOString() } : {}),
      })),
    };
  }

  /** Publish the served checkpoint if it is due, and retry relays that have not accepted the newest anchor (one run at a time). */
  tick(): Promise<void> {
    if (!this.identity.current || !this.anchors.settings) return Promise.resolve();
    this.running ??= this.run()
      .catch((e: unknown) => this.logger.error(`Nostr anchoring failed this time: ${(e as Error).message}`))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async run(): Promise<void> {
    const s = this.anchors.settings!;
    // Read from the database each run: another API process may have anchored a newer checkpoint, or had a relay accept it.
    let n = await this.repo.newestAnchor(this.db);
    const cp = await this.log.latest();
    const due = cp && cp.size > 0 && (!n || cp.size > n.size) && (!n || s.intervalMs === 0 || Date.now() - Date.parse(n.created_at) >= s.intervalMs);
    if (cp && due) {
      const event = finalizeEvent(anchorEventTemplate(cp.note, Math.floor(Date.now() / 1000)), s.secretKey);
      const a: StoredNostrAnchor = { size: cp.size, event_id: event.id, pubkey: event.pubkey, event: JSON.stringify(event), created_at: new Date(event.created_at * 1000).toISOString() };
      await this.db.write((tx) => this.repo.insertAnchor(tx, a));
      // Another API process may have stored its own event for this size first: publish the stored one.
      n = (await this.repo.anchor(this.db, cp.size)) ?? a;
      this.logger.log(`checkpoint ${cp.size} anchored as Nostr event ${n.event_id}`);
    }
    if (!n) return;
    if (this.newest?.size !== n.size) for (const r of this.relays.values()) Object.assign(r, { failures: 0, retryAt: 0, lastError: null });
    this.newest = n;
    for (const p of await this.repo.publications(this.db, n.size)) {
      const r = this.relays.get(p.relay);
      if (r && p.ok && r.lastOk?.size !== n.size) Object.assign(r, { failures: 0, retryAt: 0, lastError: null, lastOk: { size: n.size, at: p.at } });
    }
    const now = Date.now();
    const todo = [...this.relays.entries()].filter(([, r]) => r.lastOk?.size !== n.size && now >= r.retryAt);
    // Settled, not all: the run (and so the next one) waits for every relay, whatever one of them did.
    const done = await Promise.allSettled(todo.map(([url, r]) => this.publishTo(url, r, n)));
    for (const d of done) if (d.status === 'rejected') this.logger.error(`Nostr anchoring: ${(d.reason as Error)?.message ?? String(d.reason)}`);
  }

  private async publishTo(url: string, r: RelayState, a: StoredNostrAnchor): Promise<void> {
    const event = JSON.parse(a.event) as NostrEvent;
    const answer = await publishToRelay(url, event, RELAY_TIMEOUT_MS);
    // A relay's text is data: logged JSON-quoted (no line breaks or escape codes reach the log), never printed raw.
    for (const notice of answer.notices) this.logger.debug(`NOTICE from ${url}: ${JSON.stringify(notice)}`);
    const { ok, message } = answer;
    const at = new Date().toISOString();
    // The attempt number is taken inside the write (writes are serialized, across processes too): never two alike.
    await this.db.write(async (tx) => this.repo.insertPublication(tx, { size: a.size, relay: url, attempt: (await this.repo.attempts(tx, a.size, url)) + 1, ok, message, at }));
    if (ok) {
      Object.assign(r, { failures: 0, retryAt: 0, lastError: null, lastOk: { size: a.size, at } });
      this.logger.log(`Nostr event ${a.event_id} (checkpoint ${a.size}) accepted by ${url}`);
      return;
    }
    r.failures += 1;
    const delay = Math.min(NOSTR_BACKOFF_MS * 2 ** (r.failures - 1), NOSTR_MAX_BACKOFF_MS);
    r.retryAt = Date.now() + delay;
    r.lastError = `${at}: ${message.slice(0, 300)}`;
    this.logger.warn(`Nostr event ${a.event_id} (checkpoint ${a.size}) not accepted by ${url}: ${JSON.stringify(message.slice(0, 300))}; retrying in ${delay} ms`);
  }
}
