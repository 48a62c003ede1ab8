import { DatabaseService } from '../../src/database/database.service';
import { createPgDatabase, startApp } from '../helpers/app';

describe('migrations on PostgreSQL', () => {
  it('let several replicas start together on a fresh database (run once, under a lock)', async () => {
    const db = await createPgDatabase();
    try {
      const apps = await Promise.all([1, 2, 3].map(() => startApp('postgres', { DATABASE_URL: db.url })));
      try {
        const rows = await apps[0].app.get(DatabaseService).query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
        const names = rows.map((r) => r.name);
        expect(new Set(names).size).toBe(names.length);
        expect(names[0]).toBe('CreateLedgerPostgres1764450000000');
        const r = await apps[1].http.get('/api/ledger/verify');
        expect(r.body.ok).toBe(true);
      } finally {
        for (const a of apps) await a.app.close();
      }
    } finally {
      await db.drop();
    }
  }, 60_000); // three app start-ups on one database: seconds each on a loaded 2-core machine
});
