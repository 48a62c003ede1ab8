/**
 * Column conversions shared by the repositories, written once: both drivers
 * return integers and booleans differently (PostgreSQL BIGINT as a string,
 * SQLite booleans as 0/1), and stored JSON texts are parsed in one way.
 */
import type { Tx } from './database.service';

/** Anything that runs `?`-placeholder SQL: the {@link DatabaseService} outside a write, or a write transaction ({@link Tx}). */
export type Queryable = Pick<Tx, 'query'>;

/** Rewrite `?` placeholders to `$1..$n` (PostgreSQL). Our SQL never has `?` inside literals. */
export function toPostgresPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** A stored integer (PostgreSQL BIGINT arrives as a string). */
export function int(v: unknown): number {
  return Number(v);
}

/** A stored integer or NULL. */
export function intOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

/** A stored boolean (SQLite 0/1, PostgreSQL integer 0/1 or boolean). */
export function bool(v: unknown): boolean {
  return v === true || Number(v) === 1;
}

/** A boolean as stored: 1 or 0. */
export function boolParam(v: boolean): 0 | 1 {
  return v ? 1 : 0;
}

/** A stored JSON text parsed, or undefined when it is absent or does not parse. */
export function parseStoredJson(raw: unknown): unknown {
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** `?, ?, ?` for `n` values (an `IN (...)` list). */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/** `values` in pages of `size` (bound-parameter limits of both drivers). */
export function* pages<T>(values: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < values.length; i += size) yield values.slice(i, i + size);
}

/**
 * Insert one row into `table`: queued with {@link Tx.insertLater} when `q` is
 * a write transaction (written with the call's other queued rows as
 * multi-row INSERTs, before anything else reads), else one INSERT now.
 */
export async function insertRow(q: Queryable, table: string, columns: readonly string[], values: readonly unknown[]): Promise<void> {
  const later = (q as Partial<Pick<Tx, 'insertLater'>>).insertLater;
  if (later) return later.call(q, table, columns, values);
  await q.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders(columns.length)})`, [...values]);
}

/**
 * Update one row of `table` (`columns` set to `values` where the `key`
 * columns hold `keyValues`): queued with {@link Tx.updateLater} when `q` is a
 * write transaction (written after the call's queued inserts, before
 * anything else reads; an update queued again for the row replaces it),
 * else one UPDATE now.
 */
export async function updateRow(q: Queryable, table: string, columns: readonly string[], values: readonly unknown[], key: readonly string[], keyValues: readonly unknown[]): Promise<void> {
  const later = (q as Partial<Pick<Tx, 'updateLater'>>).updateLater;
  if (later) return later.call(q, table, columns, values, key, keyValues);
  await q.query(`UPDATE ${table} SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE ${key.map((k) => `${k} = ?`).join(' AND ')}`, [...values, ...keyValues]);
}
