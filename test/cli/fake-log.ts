/**
 * A small fake of the ledger's verifiable log for the `aer1 log` tests,
 * built from the core (TreeIntegrator, signed notes, cosignatures) and
 * serving the endpoints `aer1 log` reads:
 *
 *   GET /checkpoint                                   the latest signed checkpoint (text/plain)
 *   GET /api/ledger/checkpoints/{size}                a stored checkpoint, 404 when none
 *   GET /api/ledger/proof/consistency?first&second    {"first","second","proof":[base64]}
 *   GET /api/ledger/proof/inclusion?index&tree_size   {"index","tree_size","leaf_hash","proof"}
 *   GET /api/ledger/leaves/{index}                    {"index","position","leaf","leaf_hash"}
 *   GET /api/receipts/{id}/proof                      aer1-log-proof/1 JSON, or tlog-proof text
 *                                                     with ?format=tlog-proof or Accept: text/plain
 *   GET /.well-known/aer1                             discovery
 *
 * A {@link FakeLogServer} serves whichever {@link FakeLog} is set on it, so a
 * test can swap an honest log for a rewritten one behind the same URL.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { eventHash, eventHashInput, LEDGER_GENESIS_HASH, StoredEvent } from '../../src/core/ledger/event-hash';
import {
  checkpointNoteText,
  consistencyProofSync,
  cosignCheckpoint,
  formatProofFile,
  inclusionProofSync,
  leafHash,
  NodeId,
  NoteSigner,
  signNote,
  TreeIntegrator,
} from '../../src/core/tlog';

/** An event to append: stream, type and data (JSON text). */
export interface NewEvent {
  stream_id: string;
  type: string;
  data: string;
}

/** The data of a `ReceiptRecorded` event carrying `raw` (see src/receipts/receipts.events.ts). */
export function receiptEvent(id: string, raw: string): NewEvent {
  const data = { id, raw, form: 'core', wrapped_in: null, verdict: 'valid', reasons: [], provenance_class: null, tool: null, status: null, output_hash: null, created_at: null, supersedes: null };
  return { stream_id: `receipt:${id}`, type: 'ReceiptRecorded', data: JSON.stringify(data) };
}

export class FakeLog {
  readonly events: (Omit<StoredEvent, 'event_hash'> & { event_hash: string })[] = [];
  readonly leaves: Buffer[] = [];
  private readonly nodes = new Map<string, Buffer>();
  private readonly tree = TreeIntegrator.empty();
  /** Signed checkpoints by size. */
  readonly checkpoints = new Map<number, string>();
  latest: string | null = null;

  constructor(
    readonly origin: string,
    readonly signer: NoteSigner,
    /** recorded_at of every event (a fixed clock keeps rewritten histories comparable). */
    private readonly clock = '2026-12-01T00:00:00.000Z',
  ) {}

  /** Append events (format 2, key `k1`; format 1: without the key, as events written before attribution), integrating their leaves. */
  append(events: NewEvent[], format: 1 | 2 = 2): this {
    const streamPos = new Map<string, number>();
    for (const e of this.events) streamPos.set(e.stream_id, Math.max(streamPos.get(e.stream_id) ?? 0, e.stream_position));
    for (const n of events) {
      const position = this.events.length + 1;
      const prev_hash = this.events.length ? this.events[this.events.length - 1].event_hash : LEDGER_GENESIS_HASH;
      const stream_position = (streamPos.get(n.stream_id) ?? 0) + 1;
      streamPos.set(n.stream_id, stream_position);
      const ev = { position, prev_hash, recorded_at: this.clock, stream_id: n.stream_id, stream_position, type: n.type, data: n.data, ...(format === 2 ? { format: 2, key_id: 'k1', key_name: 'producer-one' } : { format: 1 }) };
      const stored = { ...ev, event_hash: eventHash(ev) };
      this.events.push(stored);
      const leaf = Buffer.from(eventHashInput(stored), 'utf8');
      this.leaves.push(leaf);
      const r = this.tree.appendLeaves([leaf]);
      for (const node of r.nodes.toArray()) this.nodes.set(`${node.level}/${node.index}`, Buffer.from(node.hash));
    }
    return this;
  }

  /** `count` plain timeline events. */
  appendTimeline(count: number, job = 'job-1', tag = 'a'): this {
    return this.append(Array.from({ length: count }, (_, i) => ({ stream_id: `timeline:${job}`, type: 'TimelineEntryAppended', data: JSON.stringify({ seq: i, tag }) })));
  }

  get size(): number {
    return this.tree.size;
  }

  /** Sign (and have `cosigners` cosign) a checkpoint of the current tree; it becomes the latest. */
  publish(cosigners: NoteSigner[] = [], timestamp = 1_780_000_000): string {
    const text = checkpointNoteText({ origin: this.origin, size: this.tree.size, rootHash: this.tree.root(), extensions: [] });
    let note = signNote(text, [this.signer]);
    for (const w of cosigners) note += cosignCheckpoint(text, w, timestamp) + '\n';
    this.checkpoints.set(this.tree.size, note);
    this.latest = note;
    return note;
  }

  private readonly reader = { readHashes: (ids: readonly NodeId[]) => ids.map((id) => this.nodes.get(`${id.level}/${id.index}`)!) };

  inclusion(index: number, size: number): Buffer[] {
    return inclusionProofSync(index, size, this.reader);
  }

  consistency(m: number, n: number): Buffer[] {
    return consistencyProofSync(m, n, this.reader);
  }

  /** The leaf index of a receipt's `ReceiptRecorded` event (-1 when none). */
  receiptIndex(id: string): number {
    return this.events.findIndex((e) => e.stream_id === `receipt:${id}` && e.type === 'ReceiptRecorded');
  }

  /** The aer1-log-proof/1 JSON of leaf `index` against the latest checkpoint. */
  jsonProof(index: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const note = this.latest!;
    const size = Number(note.split('\n')[1]);
    return {
      format: 'aer1-log-proof/1',
      leaf_index: index,
      leaf: this.leaves[index].toString('base64'),
      leaf_hash: leafHash(this.leaves[index]).toString('base64'),
      tree_size: size,
      proof: this.inclusion(index, size).map((h) => h.toString('base64')),
      checkpoint: note,
      ...extra,
    };
  }

  /** The c2sp.org/tlog-proof text of leaf `index` (the leaf in `extra` unless `withLeaf` is false). */
  tlogProof(index: number, withLeaf = true): string {
    const note = this.latest!;
    const size = Number(note.split('\n')[1]);
    return formatProofFile({ extra: withLeaf ? this.leaves[index] : null, index, proof: this.inclusion(index, size), checkpoint: note });
  }
}

/** An HTTP server for a {@link FakeLog}; `log` and `checkpointOverride` may be changed between requests. */
export class FakeLogServer {
  log: FakeLog;
  /** When set, served at /checkpoint instead of the log's latest. */
  checkpointOverride: string | null = null;
  /** When set, served at /api/ledger/leaves/{index} instead of the real leaf. */
  leafOverride: Buffer | null = null;
  /** When set, the receipt proof endpoint answers the proof of this leaf instead of the receipt's. */
  receiptIndexOverride: number | null = null;
  readonly requests: string[] = [];
  private server: Server | null = null;
  url = '';

  constructor(log: FakeLog) {
    this.log = log;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.requests.push(req.url ?? '');
      const u = new URL(req.url ?? '/', 'http://x');
      const json = (status: number, body: unknown): void => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const text = (status: number, body: string): void => {
        res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(body);
      };
      const log = this.log;
      const n = (k: string): number => Number(u.searchParams.get(k));
      let m: RegExpExecArray | null;
      if (u.pathname === '/checkpoint') return log.latest ? text(200, this.checkpointOverride ?? log.latest) : text(404, 'no checkpoint yet');
      if ((m = /^\/api\/ledger\/checkpoints\/(\d+)$/.exec(u.pathname))) {
        const c = log.checkpoints.get(Number(m[1]));
        return c ? text(200, c) : json(404, { error: 'not_found' });
      }
      if (u.pathname === '/api/ledger/proof/consistency') {
        const first = n('first');
        const second = n('second');
        if (!(first >= 1 && first <= second && second <= log.size)) return json(400, { error: 'bad_sizes' });
        return json(200, { first, second, proof: log.consistency(first, second).map((h) => h.toString('base64')) });
      }
      if (u.pathname === '/api/ledger/proof/inclusion') {
        const index = n('index');
        const size = n('tree_size');
        if (!(index >= 0 && index < size && size <= log.size)) return json(400, { error: 'bad_index' });
        return json(200, { index, tree_size: size, leaf_hash: leafHash(log.leaves[index]).toString('base64'), proof: log.inclusion(index, size).map((h) => h.toString('base64')) });
      }
      if ((m = /^\/api\/ledger\/leaves\/(\d+)$/.exec(u.pathname))) {
        const index = Number(m[1]);
        const leaf = this.leafOverride ?? log.leaves[index];
        if (!leaf) return json(404, { error: 'not_found' });
        return json(200, { index, position: index + 1, leaf: leaf.toString('base64'), leaf_hash: leafHash(leaf).toString('base64') });
      }
      if ((m = /^\/api\/receipts\/([^/]+)\/proof$/.exec(u.pathname))) {
        const found = log.receiptIndex(decodeURIComponent(m[1]));
        const i = found >= 0 && this.receiptIndexOverride !== null ? this.receiptIndexOverride : found;
        if (i < 0) return json(404, { error: 'not_found' });
        if (u.searchParams.get('format') === 'tlog-proof' || req.headers.accept === 'text/plain') return text(200, log.tlogProof(i));
        return json(200, log.jsonProof(i));
      }
      if (u.pathname === '/.well-known/aer1') return json(200, { origin: log.origin, log_vkey: log.signer.vkey, checkpoint_url: `${this.url}/checkpoint`, draft: 'draft-zambo-aer1-07' });
      return json(404, { error: 'not_found' });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    s.closeAllConnections();
    await closed;
  }
}
