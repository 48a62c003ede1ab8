import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiKeysService } from '../auth/api-keys.service';
import { AppConfig } from '../config/configuration';
import { StoredEvent, SYSTEM } from '../core/ledger/event-hash';
import { ERASABLE_BY_POSITION_ONLY, ERASABLE_TYPES } from '../core/ledger/retained';
import { DatabaseService } from '../database/database.service';
import { EventsRepository } from '../ledger/events.repository';
import { ErasureTarget, erasureTargets, PagedErasure } from './erasure-pages';
import { ErasureService } from './erasure.service';
import { parseRetentionPeriod, RetentionPeriod, retentionCutoff, shorterThanSixMonths } from './retention-period';

/** What retention erases: every erasable type but plans and coverage reports (the compliance team's, erased only when named by position). */
const RETENTION_TYPES = [...ERASABLE_TYPES].filter((t) => !ERASABLE_BY_POSITION_ONLY.has(t));

/** Positions read per query while looking for payloads past their retention. */
export const RETENTION_SCAN_WINDOW = 2_000;

/** One retention policy: a period, and the legal basis its erasures name. */
interface Policy {
  period: RetentionPeriod;
  legal_basis: string;
  /** Events recorded before this instant (ISO 8601) are past it. */
  cutoff: string;
}

/** What one retention run erased: one erasure per policy that found payloads past it. */
export interface RetentionRun {
  /** Payloads erased, every policy together. */
  erased: number;
  /** Positions looked at (1 to the ledger's head when the run began). */
  scanned: number;
  erasures: { erasure_id: string; legal_basis: string; count: number; erasure_positions: number[] }[];
}

/**
 * Retention (issue 29): payloads of erasable events older than their period
 * (the writing key's `retention_period`, else RETENTION_PERIOD) are erased by
 * the ledger itself, as the `system` writer, reason `retention`, origin
 * `retention`, the policy as legal basis ("retention policy
 * RETENTION_PERIOD=P180D", "key retention_period=P30D"). Candidates are read
 * outside the write lock, {@link RETENTION_SCAN_WINDOW} positions a query;
 * payloads are erased a page a write ({@link erasurePageSize}), each page re-checked in
 * its write (a payload erased meanwhile, by a request or another replica's
 * run, is never erased twice). Scheduled by {@link RetentionScheduler}.
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger('Retention');
  /** RETENTION_PERIOD, parsed (validated at start), or null. */
  readonly global: RetentionPeriod | null;

  constructor(
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
    private readonly keys: ApiKeysService,
    private readonly erasure: ErasureService,
    config: ConfigService<AppConfig, true>,
  ) {
    const text = config.get('RETENTION_PERIOD', { infer: true });
    this.global = text ? parseRetentionPeriod(text) : null;
  }

  /**
   * The warnings due at start (EU AI Act Art. 12 and 19 ask for at least six
   * months): one line for RETENTION_PERIOD and one per distinct key period
   * shorter than six months. Logged by the scheduler, once.
   */
  async shortPeriodWarnings(): Promise<string[]> {
    const out: string[] = [];
    const law = 'shorter than six months: the EU AI Act (Art. 12 and 19) asks high-risk AI systems\' logs to be kept at least six months; payloads past it are erased for good';
    if (this.global && shorterThanSixMonths(this.global)) out.push(`RETENTION_PERIOD=${this.global.text} is ${law}`);
    const keyPeriods = new Map<string, number>();
    for (const text of (await this.keys.retentionPeriods()).values()) keyPeriods.set(text, (keyPeriods.get(text) ?? 0) + 1);
    for (const [text, n] of keyPeriods) {
      const p = safeParse(text);
      if (p && shorterThanSixMonths(p)) out.push(`retention_period=${text} (${n} key${n === 1 ? '' : 's'}) is ${law}`);
    }
    return out;
  }

  /**
   * One run at `now`: erase every held payload past its period. Safe to run
   * concurrently with itself (in this or another process). `stop()` is asked
   * between windows (shutdown): true ends the run early, the pages written stay.
   */
  async run(now: Date = new Date(), stop: () => boolean = () => false): Promise<RetentionRun> {
    const result: RetentionRun = { erased: 0, scanned: 0, erasures: [] };
    const policies = new Map<string, Policy>();
    const policy = (p: RetentionPeriod, legal_basis: string): Policy => {
      const known = policies.get(legal_basis);
      if (known) return known;
      const made = { period: p, legal_basis, cutoff: retentionCutoff(p, now).toISOString() };
      policies.set(legal_basis, made);
      return made;
    };
    const globalPolicy = this.global ? policy(this.global, `retention policy RETENTION_PERIOD=${this.global.text}`) : null;
    const byKey = new Map<string, Policy>();
    for (const [keyId, text] of await this.keys.retentionPeriods()) {
      const p = safeParse(text);
      if (p) byKey.set(keyId, policy(p, `key retention_period=${text}`));
      else this.logger.warn(`key ${keyId}: retention_period ${JSON.stringify(text)} is not an ISO 8601 duration; RETENTION_PERIOD applies to its records`);
    }
    if (policies.size === 0) return result;
    const latest = [...policies.values()].reduce((a, b) => (a > b.cutoff ? a : b.cutoff), '');
    const head = (await this.events.head(this.db))?.position ?? 0;
    const runs = new Map<string, { erasure: PagedErasure; pending: ErasureTarget[] }>();
    const flush = async (r: { erasure: PagedErasure; pending: ErasureTarget[] }, min: number) => {
      while (r.pending.length >= min && r.pending.length > 0) result.erased += (await r.erasure.erasePage(r.pending.splice(0, r.erasure.pageSize))).length;
    };
    for (let from = 1; from <= head && !stop(); from += RETENTION_SCAN_WINDOW) {
      const to = Math.min(head, from + RETENTION_SCAN_WINDOW - 1);
      const rows: StoredEvent[] = await this.events.heldBefore(this.db, from, to, RETENTION_TYPES, latest);
      result.scanned = to;
      await new Promise((resolve) => setImmediate(resolve)); // SQLite reads block the event loop while they run: let requests in between
      for (const e of rows) {
        const p = (e.key_id ? byKey.get(e.key_id) : undefined) ?? globalPolicy;
        if (!p || e.recorded_at >= p.cutoff) continue;
        let r = runs.get(p.legal_basis);
        if (!r) runs.set(p.legal_basis, (r = { erasure: this.erasure.pagedErasure({ reason: 'retention', legal_basis: p.legal_basis }, SYSTEM, 'retention'), pending: [] }));
        r.pending.push(...erasureTargets([e]));
        await flush(r, r.erasure.pageSize);
      }
    }
    for (const r of runs.values()) await flush(r, 1);
    for (const [legal_basis, r] of runs) {
      if (r.erasure.positions.length > 0) result.erasures.push({ erasure_id: r.erasure.erasure_id, legal_basis, count: r.erasure.positions.length, erasure_positions: r.erasure.eventPositions });
    }
    if (result.erased > 0) {
      await this.erasure.checkpointWal(result.erasures[0].erasure_id);
      this.logger.log(`retention erased ${result.erased} payload(s): ${result.erasures.map((x) => `${x.count} by erasure ${x.erasure_id} (${x.legal_basis})`).join('; ')}`);
    }
    return result;
  }
}

function safeParse(text: string): RetentionPeriod | null {
  try {
    return parseRetentionPeriod(text);
  } catch {
    return null;
  }
}
