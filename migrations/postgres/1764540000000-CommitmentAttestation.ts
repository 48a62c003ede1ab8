import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Postgres: endpoint commitments say who stands behind them (issue 15). The
 * `commitments` read model keeps the signed note and its keys
 * (`attestation`, JSON; NULL for a self-asserted commitment) and whether the
 * ledger issued it (`issued_by`). Frozen as the literal SQL it runs.
 */
export class CommitmentAttestationPostgres1764540000000 implements MigrationInterface {
  name = 'CommitmentAttestationPostgres1764540000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE commitments ADD COLUMN attestation TEXT`);
    await q.query(`ALTER TABLE commitments ADD COLUMN issued_by TEXT`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE commitments DROP COLUMN issued_by`);
    await q.query(`ALTER TABLE commitments DROP COLUMN attestation`);
  }
}
