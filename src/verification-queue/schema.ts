/**
 * Tables of the verification queue: projections of the `batch:<id>` streams,
 * rebuildable from the ledger (created by the CreateVerificationBatches
 * migrations; `verification_results` has one row per (batch, target)).
 */
export const VERIFICATION_TABLE_NAMES = ['verification_results', 'verification_batches'];
