import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sqlite: webhooks that keep their word (issue 26). `webhook_events` is the
 * feed deliveries are read from: one row per event (position in commit
 * order, written in the transaction of the ledger event that caused it; one
 * row per type and event key). Each subscription keeps its own position in
 * it (the last event delivered or given up), its failed attempts on the next
 * one, when it may be tried again, and a lease (which process delivers it,
 * until when, in epoch ms). `webhook_failures` records every delivery given
 * up. Frozen as the literal SQL it runs.
 */
export class WebhookPositionsSqlite1764560000000 implements MigrationInterface {
  name = 'WebhookPositionsSqlite1764560000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhook_events (position INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, event_key TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (type, event_key))`);
    await q.query(`ALTER TABLE webhook_subscriptions ADD COLUMN position INTEGER NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE webhook_subscriptions ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE webhook_subscriptions ADD COLUMN next_attempt_at INTEGER NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE webhook_subscriptions ADD COLUMN lease_owner TEXT`);
    await q.query(`ALTER TABLE webhook_subscriptions ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0`);
    await q.query(`CREATE INDEX webhook_subscriptions_owner ON webhook_subscriptions (owner)`);
    await q.query(`CREATE INDEX webhook_subscriptions_due ON webhook_subscriptions (next_attempt_at, id)`);
    await q.query(`CREATE TABLE webhook_failures (subscription_id TEXT NOT NULL, position INTEGER NOT NULL, webhook_id TEXT NOT NULL, type TEXT NOT NULL, attempts INTEGER NOT NULL, reason TEXT NOT NULL, failed_at TEXT NOT NULL, PRIMARY KEY (subscription_id, position))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_failures`);
    await q.query(`DROP INDEX webhook_subscriptions_due`);
    await q.query(`DROP INDEX webhook_subscriptions_owner`);
    for (const c of ['lease_until', 'lease_owner', 'next_attempt_at', 'attempts', 'position']) await q.query(`ALTER TABLE webhook_subscriptions DROP COLUMN ${c}`);
    await q.query(`DROP TABLE webhook_events`);
  }
}
