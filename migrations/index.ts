/**
 * The migrations of each dialect, in order: the one registry, loaded by the
 * database module (src/database/) alone. A migration is frozen history: it
 * imports nothing from src/ (npm run lint enforces it).
 */
import type { MigrationInterface } from 'typeorm';
import { CreateLedgerSqlite1764450000000 } from './sqlite/1764450000000-CreateLedger';
import { CreateLedgerPostgres1764450000000 } from './postgres/1764450000000-CreateLedger';
import { CreatePlansSqlite1764460000000 } from './sqlite/1764460000000-CreatePlans';
import { CreatePlansPostgres1764460000000 } from './postgres/1764460000000-CreatePlans';
import { CreateVerificationBatchesSqlite1764470000000 } from './sqlite/1764470000000-CreateVerificationBatches';
import { CreateVerificationBatchesPostgres1764470000000 } from './postgres/1764470000000-CreateVerificationBatches';
import { KeyAttributionSqlite1764480000000 } from './sqlite/1764480000000-KeyAttribution';
import { KeyAttributionPostgres1764480000000 } from './postgres/1764480000000-KeyAttribution';
import { ListIndexesSqlite1764490000000 } from './sqlite/1764490000000-ListIndexes';
import { ListIndexesPostgres1764490000000 } from './postgres/1764490000000-ListIndexes';
import { VerifiableLogSqlite1764500000000 } from './sqlite/1764500000000-VerifiableLog';
import { VerifiableLogPostgres1764500000000 } from './postgres/1764500000000-VerifiableLog';
import { WebhooksSqlite1764520000000 } from './sqlite/1764520000000-Webhooks';
import { WebhooksPostgres1764520000000 } from './postgres/1764520000000-Webhooks';
import { OutcomesSqlite1764510000000 } from './sqlite/1764510000000-Outcomes';
import { OutcomesPostgres1764510000000 } from './postgres/1764510000000-Outcomes';
import { WitnessingSqlite1764530000000 } from './sqlite/1764530000000-Witnessing';
import { WitnessingPostgres1764530000000 } from './postgres/1764530000000-Witnessing';
import { CommitmentAttestationSqlite1764540000000 } from './sqlite/1764540000000-CommitmentAttestation';
import { CommitmentAttestationPostgres1764540000000 } from './postgres/1764540000000-CommitmentAttestation';
import { WebhookPositionsSqlite1764560000000 } from './sqlite/1764560000000-WebhookPositions';
import { WebhookPositionsPostgres1764560000000 } from './postgres/1764560000000-WebhookPositions';
import { EventFormat3Sqlite1764570000000 } from './sqlite/1764570000000-EventFormat3';
import { EventFormat3Postgres1764570000000 } from './postgres/1764570000000-EventFormat3';
import { NostrAnchorsSqlite1764583300000 } from './sqlite/1764583300000-NostrAnchors';
import { NostrAnchorsPostgres1764583300000 } from './postgres/1764583300000-NostrAnchors';

/** A migration class. */
export type MigrationClass = new () => MigrationInterface;

export const MIGRATIONS: Record<'sqlite' | 'postgres', MigrationClass[]> = {
  sqlite: [CreateLedgerSqlite1764450000000, CreatePlansSqlite1764460000000, CreateVerificationBatchesSqlite1764470000000, KeyAttributionSqlite1764480000000, ListIndexesSqlite1764490000000, VerifiableLogSqlite1764500000000, OutcomesSqlite1764510000000, WebhooksSqlite1764520000000, WitnessingSqlite1764530000000, CommitmentAttestationSqlite1764540000000, WebhookPositionsSqlite1764560000000, EventFormat3Sqlite1764570000000, NostrAnchorsSqlite1764583300000],
  postgres: [CreateLedgerPostgres1764450000000, CreatePlansPostgres1764460000000, CreateVerificationBatchesPostgres1764470000000, KeyAttributionPostgres1764480000000, ListIndexesPostgres1764490000000, VerifiableLogPostgres1764500000000, OutcomesPostgres1764510000000, WebhooksPostgres1764520000000, WitnessingPostgres1764530000000, CommitmentAttestationPostgres1764540000000, WebhookPositionsPostgres1764560000000, EventFormat3Postgres1764570000000, NostrAnchorsPostgres1764583300000],
};
