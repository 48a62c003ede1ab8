import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import type { NostrEvent } from '../core/nostr/anchor';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { NostrSettings, parseNostrSettings, publicRelayUrl } from './nostr-config';
import { NostrRepository, StoredNostrAnchor, StoredNostrPublication } from './nostr.repository';

/** One relay's answer to an anchor: its newest attempt. */
export interface NostrRelayStatus {
  url: string;
  /** True when the relay answered OK true (on any attempt). */
  ok: boolean;
  /** The relay's message on its newest attempt, or why it could not be reached. */
  message: string;
  /** RFC 3339 UTC time of the newest attempt. */
  at: string;
  attempts: number;
}

/**
 * A Nostr anchor as the draft's S10 names its fields: `relay_event_id` (the
 * NIP-01 event id), `publisher_key` (64 hex), `relays` (the URLs that
 * answered OK true), `published` (at least one did), `published_at` (the
 * first OK, RFC 3339 UTC; null until then), plus every relay's status and
 * the signed event itself (check it with any Nostr library, or `aer1`).
 */
export interface NostrAnchorInfo {
  type: 'nostr';
  size: number;
  relay_event_id: string;
  publisher_key: string;
  relays: string[];
  published: boolean;
  published_at: string | null;
  relay_status: NostrRelayStatus[];
  event: NostrEvent;
}

/**
 * The reads of Nostr anchors (issue 33), shared by the log's proofs, the
 * anchors endpoint, the receipt answers and the packs: the configured
 * settings (NOSTR_*), the stored events and each relay's answers.
 */
@Injectable()
export class NostrAnchors {
  readonly settings: NostrSettings;
  private readonly repo = new NostrRepository();

  constructor(
    private readonly db: DatabaseService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.settings = parseNostrSettings(config.get('NOSTR_RELAYS', { infer: true }), config.get('NOSTR_KEY_FILE', { infer: true }), config.get('NOSTR_ALLOW_INSECURE', { infer: true }), config.get('NOSTR_INTERVAL_MS', { infer: true }));
  }

  /** The stored anchor of the checkpoint of exactly `size`, with its relays' answers; null when it has none. */
  async of(size: number, q: Queryable = this.db): Promise<NostrAnchorInfo | null> {
    const a = await this.repo.anchor(q, size);
    return a ? this.info(a, await this.repo.publications(q, size)) : null;
  }

  /**
   * The newest anchor accepted by at least one relay whose checkpoint covers
   * leaf `index` (size > index) and is not newer than `upTo`; null when none.
   */
  async covering(index: number, upTo: number, q: Queryable = this.db): Promise<NostrAnchorInfo | null> {
    const a = await this.repo.newestPublished(q, index, upTo);
    return a ? this.info(a, await this.repo.publications(q, a.size)) : null;
  }

  /** The answer of anchor `a` from its attempts. */
  info(a: StoredNostrAnchor, attempts: readonly StoredNostrPublication[]): NostrAnchorInfo {
    const byRelay = new Map<string, StoredNostrPublication[]>();
    for (const p of attempts) byRelay.set(p.relay, [...(byRelay.get(p.relay) ?? []), p]);
    const relay_status = [...byRelay.entries()].map(([url, ps]) => {
      const last = ps[ps.length - 1];
      return { url: publicRelayUrl(url), ok: ps.some((p) => p.ok), message: last.message, at: last.at, attempts: ps.length };
    });
    const oks = attempts.filter((p) => p.ok).map((p) => p.at).sort();
    return {
      type: 'nostr',
      size: a.size,
      relay_event_id: a.event_id,
      publisher_key: a.pubkey,
      relays: relay_status.filter((r) => r.ok).map((r) => r.url),
      published: oks.length > 0,
      published_at: oks[0] ?? null,
      relay_status,
      event: JSON.parse(a.event) as NostrEvent,
    };
  }
}
