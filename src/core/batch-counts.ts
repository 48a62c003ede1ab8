/**
 * Results of a verification batch per outcome, as `GET
 * /api/verification-batches/{id}` answers them in `counts` and `aer1 batch
 * submit` prints them; they add up to `done`. A target the ledger does not
 * hold is recorded `invalid` with reasons `["not_found"]` and counted as
 * `not_found`, not as `invalid`.
 */
export interface BatchCounts {
  valid: number;
  invalid: number;
  historical: number;
  incomplete: number;
  not_found: number;
}
