import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Postgres: webhook subscriptions (issue 16). An operational table like
 * `api_keys`, not a ledger projection: it holds each subscription's signing
 * secret, which must be readable to sign deliveries and must never enter the
 * append-only, published event chain; a deleted subscription is deleted.
 * Frozen as the literal SQL it runs.
 */
export class WebhooksPostgres1764520000000 implements MigrationInterface {
  name = 'WebhooksPostgres1764520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhook_subscriptions (id TEXT PRIMARY KEY, url TEXT NOT NULL, events TEXT NOT NULL, secret TEXT NOT NULL, key_id TEXT NOT NULL, key_name TEXT NOT NULL, owner TEXT, created_at TEXT NOT NULL)`);
    await q.query(`CREATE INDEX webhook_subscriptions_key_id ON webhook_subscriptions (key_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_subscriptions_key_id`);
    await q.query(`DROP TABLE webhook_subscriptions`);
  }
}
