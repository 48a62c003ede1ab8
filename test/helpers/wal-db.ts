/**
 * A fresh SQLite file in WAL mode in its own temporary folder, for the WAL
 * tests: `pragmas` run after `journal_mode = WAL`, then `schema`.
 */
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function walDatabase(prefix: string, name: string, pragmas: string[], schema: string): { dir: string; file: string; db: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, name);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const p of pragmas) db.pragma(p);
  db.exec(schema);
  return { dir, file, db };
}
