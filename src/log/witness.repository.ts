import { int, placeholders, Queryable } from '../database/rows';

/** A stored, verified witness cosignature on the checkpoint of `size`. */
export interface StoredCosignature {
  size: number;
  /** The witness's verifier key (type 0x04), as configured. */
  witness_vkey: string;
  witness_name: string;
  /** The note signature line, without newline (`— <name> <base64>`). */
  line: string;
  /** The cosignature's own timestamp (POSIX seconds). */
  timestamp: number;
  /** RFC 3339 UTC time the ledger received and verified it. */
  received_at: string;
}

/** A stored, verified RFC 3161 TimeStampToken over the checkpoint of `size`. */
export interface StoredTimestamp {
  size: number;
  /** DER of the TimeStampToken (CMS ContentInfo), as received. */
  token: Buffer;
  /** TSTInfo genTime, RFC 3339 UTC. */
  gen_time: string;
  /** Subject DN of the TSA's signing certificate. */
  tsa_name: string;
  received_at: string;
}

type CosigRow = { size: number | string; witness_vkey: string; witness_name: string; line: string; timestamp: number | string; received_at: string };
const toCosig = (r: CosigRow): StoredCosignature => ({ size: int(r.size), witness_vkey: r.witness_vkey, witness_name: r.witness_name, line: r.line, timestamp: int(r.timestamp), received_at: r.received_at });
type TsRow = { size: number | string; token: unknown; gen_time: string; tsa_name: string; received_at: string };
const toTs = (r: TsRow): StoredTimestamp => ({ size: int(r.size), token: Buffer.isBuffer(r.token) ? r.token : Buffer.from(r.token as Uint8Array), gen_time: r.gen_time, tsa_name: r.tsa_name, received_at: r.received_at });

/**
 * `checkpoint_cosignatures` and `checkpoint_timestamps` (issue 15): the only
 * SQL that touches them. Inserts are idempotent (ON CONFLICT DO NOTHING), so
 * several API processes may store the same cosignature or token.
 */
export class WitnessRepository {
  /** Store a verified cosignature; false when one by that witness on that size is already stored. */
  async insertCosignature(q: Queryable, c: StoredCosignature): Promise<boolean> {
    const rows = await q.query<{ size: number | string }>(
      'INSERT INTO checkpoint_cosignatures (size, witness_vkey, witness_name, line, timestamp, received_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (size, witness_vkey) DO NOTHING RETURNING size',
      [c.size, c.witness_vkey, c.witness_name, c.line, c.timestamp, c.received_at],
    );
    return rows.length === 1;
  }

  /** The cosignatures stored on the checkpoint of `size` by any of `vkeys` (all when `vkeys` is undefined), by witness name. */
  async cosignatures(q: Queryable, size: number, vkeys?: readonly string[]): Promise<StoredCosignature[]> {
    if (vkeys && vkeys.length === 0) return [];
    const rows = await q.query<CosigRow>(
      `SELECT size, witness_vkey, witness_name, line, timestamp, received_at FROM checkpoint_cosignatures WHERE size = ?${vkeys ? ` AND witness_vkey IN (${placeholders(vkeys.length)})` : ''} ORDER BY witness_name, witness_vkey`,
      [size, ...(vkeys ?? [])],
    );
    return rows.map(toCosig);
  }

  /** The largest sizes of at least `floor` and below `below` (when given; newest first, at most `limit`) that carry cosignatures by at least `k` of `vkeys`. */
  async witnessedSizes(q: Queryable, vkeys: readonly string[], k: number, limit: number, floor = 0, below?: number): Promise<number[]> {
    if (vkeys.length === 0) return [];
    const rows = await q.query<{ size: number | string }>(
      `SELECT size FROM checkpoint_cosignatures WHERE size >= ?${below === undefined ? '' : ' AND size < ?'} AND witness_vkey IN (${placeholders(vkeys.length)}) GROUP BY size HAVING COUNT(*) >= ? ORDER BY size DESC LIMIT ?`,
      [floor, ...(below === undefined ? [] : [below]), ...vkeys, k, limit],
    );
    return rows.map((r) => int(r.size));
  }

  /** The newest cosignature by witness `vkey`, or null. */
  async newestBy(q: Queryable, vkey: string): Promise<StoredCosignature | null> {
    const rows = await q.query<CosigRow>('SELECT size, witness_vkey, witness_name, line, timestamp, received_at FROM checkpoint_cosignatures WHERE witness_vkey = ? ORDER BY size DESC LIMIT 1', [vkey]);
    return rows[0] ? toCosig(rows[0]) : null;
  }

  /** Store a verified token; false when the size already has one. */
  async insertTimestamp(q: Queryable, t: StoredTimestamp): Promise<boolean> {
    const rows = await q.query<{ size: number | string }>('INSERT INTO checkpoint_timestamps (size, token, gen_time, tsa_name, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (size) DO NOTHING RETURNING size', [
      t.size,
      t.token,
      t.gen_time,
      t.tsa_name,
      t.received_at,
    ]);
    return rows.length === 1;
  }

  /** The token stored for the checkpoint of `size`, or null. */
  async timestamp(q: Queryable, size: number): Promise<StoredTimestamp | null> {
    const rows = await q.query<TsRow>('SELECT size, token, gen_time, tsa_name, received_at FROM checkpoint_timestamps WHERE size = ?', [size]);
    return rows[0] ? toTs(rows[0]) : null;
  }

  /** The newest stored token, or null. */
  async newestTimestamp(q: Queryable): Promise<StoredTimestamp | null> {
    const rows = await q.query<TsRow>('SELECT size, token, gen_time, tsa_name, received_at FROM checkpoint_timestamps ORDER BY size DESC LIMIT 1');
    return rows[0] ? toTs(rows[0]) : null;
  }

  /** The token of the smallest timestamped checkpoint of at least `size` leaves (the first anchor covering leaf `size - 1`), or null. */
  async timestampCovering(q: Queryable, size: number): Promise<StoredTimestamp | null> {
    const rows = await q.query<TsRow>('SELECT size, token, gen_time, tsa_name, received_at FROM checkpoint_timestamps WHERE size >= ? ORDER BY size LIMIT 1', [size]);
    return rows[0] ? toTs(rows[0]) : null;
  }
}
