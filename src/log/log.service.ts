import { Injectable } from '@nestjs/common';
import { BadInputError, LedgerError, NotFoundError, UnavailableError } from '../common/errors';
import { ERASED_LEAF_NOTE, StoredEvent, storedLeaf } from '../core/ledger/event-hash';
import {
  parseVerifierKey,
  assembleHashes,
  consistencyProofPlan,
  HashPlan,
  inclusionProofPlan,
  isTlogError,
  leafHash,
  PROOF_FILE_HEADER,
  formatProofFile,
  treeHashPlan,
  EMPTY_ROOT,
  verifyInclusion,
} from '../core/tlog';
import { DatabaseService } from '../database/database.service';
import { Queryable } from '../database/rows';
import { EventsRepository } from '../ledger/events.repository';
import { ReceiptReads } from '../receipts/receipt-reads';
import type { Principal } from '../auth/api-keys.service';
import { COVERING_POLL_MS, LeafAnswer, leafBytesWithheld, LogLocation, MAX_LEAVES_BYTES, MAX_LEAVES_PER_PAGE, TimestampInfo } from './log-answers';
import { LogIdentityService } from './log-identity.service';
import { auditTree, TreeAuditReport } from './tree-audit';
import { StoredCheckpoint, TreeRepository } from './tree.repository';
import { WitnessedCheckpoints } from './witnessed.service';
import { NostrAnchors } from './nostr-anchors.service';
import { StoredTimestamp } from './witness.repository';
import { timeStampReplyFromToken } from '../core/timestamp';

const b64 = (h: Uint8Array): string => Buffer.from(h).toString('base64');

/**
 * The verifiable log's reads (issue 14; RFC 6962 / RFC 9162 section 2.1,
 * C2SP tlog-checkpoint and tlog-proof): checkpoints, leaves, inclusion and
 * consistency proofs (each O(log n) stored nodes, one query), proof files,
 * and lookup by hash. Proofs are served for tree sizes up to the newest
 * signed checkpoint; the tree itself is written by LedgerService.append and
 * checkpoints by {@link CheckpointSigner}.
 */
@Injectable()
export class LogService {
  private readonly tree = new TreeRepository();

  constructor(
    private readonly db: DatabaseService,
    private readonly events: EventsRepository,
    private readonly receipts: ReceiptReads,
    private readonly identity: LogIdentityService,
    private readonly witnessed: WitnessedCheckpoints,
    private readonly nostr: NostrAnchors,
  ) {}

  /**
   * The checkpoint readers are served, or null: with WITNESSES configured
   * the newest one carrying at least WITNESS_QUORUM valid cosignatures (its
   * note with their lines), otherwise the newest signed one.
   */
  latest(q: Queryable = this.db): Promise<StoredCheckpoint | null> {
    return this.witnessed.enabled ? this.witnessed.newest(q) : this.tree.latestCheckpoint(q);
  }

  /** The newest log-signed checkpoint, witnessed or not (`GET /checkpoint/latest`), or null. */
  newestSigned(q: Queryable = this.db): Promise<StoredCheckpoint | null> {
    return this.tree.latestCheckpoint(q);
  }

  /**
   * Why this process's checkpoint signer has stopped (its code and a reason
   * without file system paths), or null while it signs: set by the signer
   * (checkpoint-signer.ts). A wait for a checkpoint answers at once while
   * it is set: none will come until an operator acts.
   */
  signingStopped: { code: string; reason: string } | null = null;

  /** 503 `log_unavailable` saying signing is stopped and why, for `what` (e.g. "job") not yet in a signed checkpoint. */
  private stoppedError(what: string, cp: StoredCheckpoint | null): LedgerError {
    const s = this.signingStopped!;
    return new LedgerError(503, 'log_unavailable', `checkpoint signing is stopped (${s.code}): ${s.reason}; the ${what} is not in a signed checkpoint (newest: ${cp ? cp.size : 'none'}) and none will be signed until an operator restores signing`, {
      reason_code: s.code,
      checkpoint_size: cp ? cp.size : null,
    });
  }

  /** The checkpoint of {@link latest}; 503 `log_unavailable` when this deployment signs none, 404 `no_checkpoint` before the first (witnessed one). */
  async requireLatest(): Promise<StoredCheckpoint> {
    const cp = await this.latest();
    if (cp) return cp;
    if (!this.identity.current) throw new UnavailableError('log_unavailable', `this deployment signs no checkpoints: ${this.identity.reason}`);
    if (this.witnessed.enabled) {
      const { quorum, witnesses } = this.witnessed.policy;
      throw new LedgerError(404, 'no_checkpoint', `no checkpoint has been cosigned by ${this.witnessed.quorumWords} yet; the newest log-signed one is at /checkpoint/latest`, { quorum, witnesses: witnesses.length });
    }
    throw new LedgerError(404, 'no_checkpoint', 'no checkpoint has been signed yet; try again in a second');
  }

  /**
   * The checkpoint of {@link latest} once it covers ledger position `position`
   * (its size is at least `position`), waiting at most `waitMs` for the
   * signer (and the witnesses) to produce it: the newest is read again every
   * {@link COVERING_POLL_MS} with a plain read (no transaction held, nothing
   * locked; writes go on). 503 `log_unavailable` at once when this deployment
   * signs no checkpoints or this process's signer has stopped
   * ({@link signingStopped}, `reason_code` and `checkpoint_size`); after the wait (or when `signal` aborts), 503
   * `no_checkpoint` with `retry_after_seconds` (`retryAfterSeconds`) and the
   * newest size (`checkpoint_size`, null before the first).
   */
  async latestCovering(position: number, what: string, waitMs: number, retryAfterSeconds: number, signal?: AbortSignal): Promise<StoredCheckpoint> {
    const deadline = performance.now() + waitMs;
    for (;;) {
      const cp = await this.latest();
      if (cp && cp.size >= position) return cp;
      if (!this.identity.current) throw new UnavailableError('log_unavailable', `this deployment signs no checkpoints: ${this.identity.reason}`);
      if (this.signingStopped) throw this.stoppedError(what, cp);
      const left = deadline - performance.now();
      if (left <= 0 || signal?.aborted) {
        const witnessed = this.witnessed.enabled ? ` cosigned by ${this.witnessed.quorumWords}` : '';
        throw new LedgerError(503, 'no_checkpoint', `the ${what} is not yet in a signed checkpoint${witnessed} (newest: ${cp ? cp.size : 'none'}; waited ${Math.round(waitMs)} ms); retry after the Retry-After seconds`, {
          checkpoint_size: cp ? cp.size : null,
          retry_after_seconds: retryAfterSeconds,
        });
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, COVERING_POLL_MS));
        function done(): void {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** The newest log-signed checkpoint; 503 `log_unavailable` / 404 `no_checkpoint` as {@link requireLatest}. */
  async requireNewestSigned(): Promise<StoredCheckpoint> {
    const cp = await this.newestSigned();
    if (cp) return cp;
    if (!this.identity.current) throw new UnavailableError('log_unavailable', `this deployment signs no checkpoints: ${this.identity.reason}`);
    throw new LedgerError(404, 'no_checkpoint', 'no checkpoint has been signed yet; try again in a second');
  }

  /**
   * The checkpoint a record's proof is made against: the newest RFC 3161
   * anchored one when it covers leaf `index` (so the proof can carry the
   * token), else the newest Nostr-anchored one accepted by a relay that
   * covers it (so the proof can carry the event), else {@link latest}. With
   * its token, when anchored.
   */
  private async proofCheckpoint(index: number): Promise<{ cp: StoredCheckpoint | null; ts: StoredTimestamp | null }> {
    const cp = await this.latest();
    if (!cp) return { cp, ts: null };
    const a = this.witnessed.tsa ? await this.witnessed.anchored(index, cp.size) : null;
    if (a) return { cp: a.checkpoint, ts: a.timestamp };
    const n = this.nostr.settings ? await this.nostr.covering(index, cp.size) : null;
    const stored = n ? await this.tree.checkpoint(this.db, n.size) : null;
    const anchored = stored && this.witnessed.enabled ? await this.witnessed.withCosignatures(stored) : stored;
    return { cp: anchored ?? cp, ts: null };
  }

  private timestampInfo(ts: StoredTimestamp): TimestampInfo {
    return { gen_time: ts.gen_time, tsa_name: ts.tsa_name, size: ts.size, url: `${this.checkpointUrl(ts.size)}/timestamp` };
  }

  /** The stored checkpoint of exactly `size`; 404 `checkpoint_not_found`. */
  async checkpoint(size: number): Promise<StoredCheckpoint> {
    const cp = await this.tree.checkpoint(this.db, size);
    if (!cp) throw new LedgerError(404, 'checkpoint_not_found', `no checkpoint of size ${size} was signed`, { size });
    return cp;
  }

  /** Hashes a plan names, folded (see merkle.ts): one query. */
  private async run(q: Queryable, plan: HashPlan): Promise<Buffer[]> {
    return assembleHashes(plan, await this.tree.hashes(q, plan.nodes));
  }

  /** MTH of the first `size` leaves from stored nodes (O(log n) reads). */
  async rootAt(size: number, q: Queryable = this.db): Promise<Buffer> {
    if (size === 0) return Buffer.from(EMPTY_ROOT);
    return (await this.run(q, treeHashPlan(size)))[0];
  }

  /** The tree size proofs may name: at most the newest checkpoint's (404 `tree_size_beyond_checkpoint` beyond). */
  private async checkSize(size: number, latest?: StoredCheckpoint): Promise<StoredCheckpoint> {
    const cp = latest ?? (await this.requireLatest());
    if (size > cp.size) throw new LedgerError(404, 'tree_size_beyond_checkpoint', `tree size ${size} is beyond the newest checkpoint (${cp.size}); proofs are served up to it`, { tree_size: size, checkpoint_size: cp.size });
    return cp;
  }

  /**
   * PATH(index, D[0:tree_size]) (RFC 9162 section 2.1.3.1), `tree_size`
   * defaulting to the newest checkpoint's. 400 `leaf_index_out_of_range`
   * unless index < tree_size; 404 beyond the newest checkpoint.
   */
  async inclusion(index: number, treeSize?: number): Promise<{ index: number; tree_size: number; leaf_hash: string; proof: string[] }> {
    const cp = await this.requireLatest();
    const size = treeSize ?? cp.size;
    await this.checkSize(size, cp);
    if (index >= size) throw new BadInputError('leaf_index_out_of_range', `leaf index ${index} is not below tree size ${size}`, { index, tree_size: size });
    const [leaf] = await this.tree.hashes(this.db, [{ level: 0, index }]);
    const proof = await this.run(this.db, inclusionProofPlan(index, size));
    return { index, tree_size: size, leaf_hash: b64(leaf), proof: proof.map(b64) };
  }

  /** PROOF(first, D[0:second]) (RFC 9162 section 2.1.4.1); empty for first = 0 or first = second. 400 unless first <= second. */
  async consistency(first: number, second: number): Promise<{ first: number; second: number; proof: string[] }> {
    if (first > second) throw new BadInputError('invalid_query', `first (${first}) must not exceed second (${second})`, { first, second });
    await this.checkSize(second);
    if (first === 0 || first === second) return { first, second, proof: [] };
    const proof = await this.run(this.db, consistencyProofPlan(first, second));
    return { first, second, proof: proof.map(b64) };
  }

  /**
   * Leaves `[start, start + count)` (count 1..1000) that exist, cut after
   * {@link MAX_LEAVES_BYTES} of event data (always at least one), computed
   * from their events and checked against the stored tree: 409
   * `tree_mismatch` when they differ (never served as the log's). 404 when
   * `start` is not a leaf.
   */
  async leaves(start: number, count: number, viewer: Pick<Principal, 'role'> | null): Promise<LeafAnswer[]> {
    if (count < 1 || count > MAX_LEAVES_PER_PAGE) throw new BadInputError('invalid_query', `count must be 1..${MAX_LEAVES_PER_PAGE}`, { count });
    // Cut the page at MAX_LEAVES_BYTES of event data (at least one leaf): the client pages on from the last index.
    const fit = await this.events.countWithinBytes(this.db, start, count, MAX_LEAVES_BYTES);
    const rows = fit === 0 ? [] : await this.events.page(this.db, start, start + fit, fit);
    if (rows.length === 0) throw new LedgerError(404, 'leaf_index_out_of_range', `no leaf ${start}: the log has fewer leaves`, { index: start });
    const stored = await this.tree.level(this.db, 0, start, start + rows.length);
    const withheld = await this.events.withheldPositions(this.db, start, start + rows.length);
    return rows.map((e, i) => {
      const l = storedLeaf(e);
      if (l.erased && stored[i]?.idx === e.position - 1) {
        // A format 1/2 leaf whose data was erased (issue 29): only its stored hash remains.
        return { index: e.position - 1, position: e.position, leaf: null, leaf_hash: stored[i].hash.toString('base64'), withheld: ERASED_LEAF_NOTE };
      }
      const leaf = l.leaf;
      if (leaf === null) throw new LedgerError(409, 'tree_mismatch', `the event at position ${e.position} cannot be serialized (its stored format or key was changed): it is not served as a leaf`, { index: e.position - 1 });
      const h = leafHash(leaf);
      if (!stored[i] || stored[i].idx !== e.position - 1 || !stored[i].hash.equals(h)) {
        throw new LedgerError(409, 'tree_mismatch', `leaf ${e.position - 1} computed from its event does not match the stored tree`, { index: e.position - 1 });
      }
      const why = leafBytesWithheld(e, withheld.has(e.position), viewer);
      return { index: e.position - 1, position: e.position, leaf: why ? null : leaf.toString('base64'), leaf_hash: h.toString('base64'), ...(why ? { withheld: why } : {}) };
    });
  }

  /** The stored leaf hashes (level 0 of the tree) at `indexes`, in order (issue 29: what stands for a format 1/2 leaf whose data was erased). */
  storedLeafHashes(indexes: readonly number[], q: Queryable = this.db): Promise<Buffer[]> {
    return this.tree.hashes(q, indexes.map((index) => ({ level: 0, index })));
  }

  /** The public URL of the proof file of the event at `position`. */
  proofUrlOf(position: number): string {
    return `${this.identity.publicBase}/api/ledger/events/${position}/proof`;
  }

  /**
   * Inclusion proofs of many leaves in the tree of `size` leaves (each index
   * below `size`), reading each stored node once: consecutive leaves share
   * most of their paths, so a page of 1000 costs about 20 queries. Proofs are
   * base64, in the order of `indexes`.
   */
  async inclusionProofs(indexes: readonly number[], size: number, q: Queryable = this.db): Promise<string[][]> {
    const plans = indexes.map((i) => inclusionProofPlan(i, size));
    const ids = new Map<string, { level: number; index: number }>();
    for (const p of plans) for (const n of p.nodes) ids.set(`${n.level}/${n.index}`, n);
    const list = [...ids.values()];
    const hashes = await this.tree.hashes(q, list);
    const byId = new Map<string, Buffer>(list.map((n, k) => [`${n.level}/${n.index}`, hashes[k]]));
    return plans.map((p) => assembleHashes(p, p.nodes.map((n) => byId.get(`${n.level}/${n.index}`) as Buffer)).map(b64));
  }

  /** The public URL of the checkpoint of `size`. */
  private checkpointUrl(size: number): string {
    return `${this.identity.publicBase}/api/ledger/checkpoints/${size}`;
  }

  /**
   * Where the event at `position` sits, with its inclusion proof against the
   * newest checkpoint, checked before it is returned (see {@link LogLocation}).
   * The leaf is computed from the event as stored now.
   */
  async locate(position: number, proofUrl: string, event?: StoredEvent): Promise<LogLocation> {
    const ev = event ?? (await this.events.at(this.db, position));
    if (!ev) throw new NotFoundError('event', String(position));
    const index = position - 1;
    const l = storedLeaf(ev);
    if (l.erased) {
      // Issue 29: a format 1/2 leaf whose data was erased is located by its stored leaf hash, said so.
      const [stored] = await this.tree.hashes(this.db, [{ level: 0, index }]);
      return { leaf_index: index, position, leaf_hash: stored.toString('base64'), proof_url: proofUrl, status: 'unavailable', checkpoint: null, inclusion_proof: null, detail: ERASED_LEAF_NOTE };
    }
    const leaf = l.leaf;
    if (leaf === null) {
      return { leaf_index: index, position, leaf_hash: '', proof_url: proofUrl, status: 'failed', checkpoint: null, inclusion_proof: null, detail: `the record's event (position ${position}) cannot be serialized: its stored format or key was changed behind the ledger` };
    }
    const h = leafHash(leaf);
    const base = { leaf_index: index, position, leaf_hash: h.toString('base64'), proof_url: proofUrl };
    if (!this.identity.current) return { ...base, status: 'unavailable', checkpoint: null, inclusion_proof: null, detail: `this deployment signs no checkpoints: ${this.identity.reason}` };
    const { cp, ts } = await this.proofCheckpoint(index);
    const anchor = this.witnessed.tsa ? { timestamp: ts ? this.timestampInfo(ts) : null } : {};
    const pending = this.witnessed.enabled ? `not yet in a checkpoint cosigned by ${this.witnessed.quorumWords} (checkpoints are signed within a second or so, then submitted to the witnesses)` : 'not yet in a signed checkpoint (one is signed within a second or so)';
    if (!cp || cp.size <= index) {
      // Not "pending" while signing is stopped: no checkpoint will come until an operator acts.
      if (this.signingStopped) return { ...base, status: 'unavailable', checkpoint: null, inclusion_proof: null, detail: `not in a signed checkpoint: checkpoint signing is stopped (${this.signingStopped.code}): ${this.signingStopped.reason}`, ...anchor };
      return { ...base, status: 'pending', checkpoint: null, inclusion_proof: null, detail: pending, ...anchor };
    }
    const checkpoint = { origin: this.identity.current.origin, size: cp.size, root: cp.root, signed_at: cp.signed_at, url: this.checkpointUrl(cp.size) };
    let proof: Buffer[];
    try {
      proof = await this.run(this.db, inclusionProofPlan(index, cp.size));
      verifyInclusion(index, cp.size, h, proof, Buffer.from(cp.root, 'base64'));
    } catch (e) {
      return { ...base, status: 'failed', checkpoint, inclusion_proof: null, detail: `the record's event is not proven by checkpoint ${cp.size}: ${isTlogError(e) ? e.message : (e as Error).message}`, ...anchor };
    }
    return { ...base, status: 'proven', checkpoint, inclusion_proof: proof.map(b64), ...anchor };
  }

  /**
   * A proof file for the event at `position` against the newest checkpoint:
   * `tlog-proof` (C2SP tlog-proof, the leaf bytes on its `extra` line) or
   * our JSON `aer1-log-proof/1`. 404 `no_checkpoint` until a checkpoint covers it.
   */
  async proofFile(position: number, format: 'json' | 'tlog-proof', viewer: Pick<Principal, 'role'> | null): Promise<{ type: string; body: string }> {
    const ev = await this.events.at(this.db, position);
    if (!ev) throw new NotFoundError('event', String(position));
    await this.requireLatest();
    const index = position - 1;
    const { cp: found, ts } = await this.proofCheckpoint(index);
    const cp = found as StoredCheckpoint;
    if (cp.size <= index) throw new LedgerError(404, 'no_checkpoint', `the event at position ${position} is not yet in a ${this.witnessed.enabled ? 'witnessed' : 'signed'} checkpoint (newest: ${cp.size}); try again in a second`, { position, checkpoint_size: cp.size });
    const l = storedLeaf(ev);
    if (l.leaf === null && !l.erased) throw new LedgerError(409, 'tree_mismatch', `the event at position ${position} cannot be serialized (its stored format or key was changed): no proof is served for it`, { position });
    const leaf = l.leaf;
    // A format 1/2 leaf whose data was erased (issue 29): the proof is of its stored leaf hash, and says so.
    const h = leaf ? leafHash(leaf) : (await this.tree.hashes(this.db, [{ level: 0, index }]))[0];
    const proof = await this.run(this.db, inclusionProofPlan(index, cp.size));
    try {
      verifyInclusion(index, cp.size, h, proof, Buffer.from(cp.root, 'base64'));
    } catch (e) {
      throw new LedgerError(409, 'tree_mismatch', `the event at position ${position} is not proven by checkpoint ${cp.size}: ${(e as Error).message}`, { position });
    }
    const why = leaf === null ? ERASED_LEAF_NOTE : leafBytesWithheld(ev, (await this.events.withheldPositions(this.db, position - 1, position)).has(position), viewer);
    const nostr = this.nostr.settings ? await this.nostr.of(cp.size) : null;
    if (format === 'tlog-proof') {
      // Without the leaf bytes (withheld) the file proves the leaf hash only: the verifier must be given the leaf.
      return { type: 'text/plain; charset=utf-8', body: formatProofFile({ extra: why ? null : leaf, index, proof, checkpoint: cp.note }) };
    }
    const body = {
      format: 'aer1-log-proof/1',
      spec: PROOF_FILE_HEADER,
      log_vkey: this.identity.current?.vkey ?? null,
      leaf_index: index,
      position,
      leaf: why || !leaf ? null : leaf.toString('base64'),
      ...(why ? { withheld: why } : {}),
      leaf_hash: h.toString('base64'),
      tree_size: cp.size,
      proof: proof.map(b64),
      checkpoint: cp.note,
      ...(ts ? { timestamp: timeStampReplyFromToken(ts.token).toString('base64'), timestamp_info: this.timestampInfo(ts) } : {}),
      // The signed NIP-01 event anchoring this checkpoint (issue 33), when a relay accepted one: `--nostr-pubkey` checks it offline.
      ...(nostr?.published ? { nostr_event: nostr.event } : {}),
    };
    return { type: 'application/json; charset=utf-8', body: JSON.stringify(body, null, 2) + '\n' };
  }

  /** Receipts with this output commitment (at most 100), or the event with this hash, each with its leaf index. */
  async search(by: { output_hash?: string; event_hash?: string }): Promise<{ receipts?: { id: string; position: number; leaf_index: number; url: string }[]; events?: { position: number; leaf_index: number; stream_id: string; type: string }[] }> {
    if ((by.output_hash === undefined) === (by.event_hash === undefined)) throw new BadInputError('invalid_query', 'give exactly one of output_hash=sha256:<64 hex> or event_hash=<64 hex>');
    if (by.output_hash !== undefined) {
      if (!/^sha256:[0-9a-f]{64}$/.test(by.output_hash)) throw new BadInputError('invalid_query', 'output_hash is sha256: followed by 64 lowercase hex digits', { output_hash: by.output_hash.slice(0, 80) });
      const rows = await this.receipts.byOutputHash(this.db, by.output_hash, 100);
      return { receipts: rows.map((r) => ({ id: r.id, position: r.position, leaf_index: r.position - 1, url: `${this.identity.publicBase}/run/${encodeURIComponent(r.id)}` })) };
    }
    const hash = by.event_hash as string;
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new BadInputError('invalid_query', 'event_hash is 64 lowercase hex digits', { event_hash: hash.slice(0, 80) });
    const out: { position: number; leaf_index: number; stream_id: string; type: string }[] = [];
    for (const p of await this.events.positionsOfHash(this.db, hash)) {
      const e = await this.events.at(this.db, p);
      if (e) out.push({ position: p, leaf_index: p - 1, stream_id: e.stream_id, type: e.type });
    }
    return { events: out };
  }

  private auditing: Promise<TreeAuditReport> | null = null;

  /**
   * The full tree check (see tree-audit.ts) up to the current head, shared by
   * every caller while one runs (like the chain check). Checkpoint signatures
   * are checked with this log's key when it has one.
   */
  audit(): Promise<TreeAuditReport> {
    this.auditing ??= (async () => {
      const size = (await this.events.head(this.db))?.position ?? 0;
      const key = this.identity.current ? parseVerifierKey(this.identity.current.vkey) : undefined;
      return auditTree(this.db, size, { logKey: key, yieldEvery: () => new Promise<void>((r) => setImmediate(r)) });
    })().finally(() => {
      this.auditing = null;
    });
    return this.auditing;
  }
}
