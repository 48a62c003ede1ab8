import { Injectable } from '@nestjs/common';

/**
 * Appends refused for a reason found outside the ledger: set by this API
 * process's checkpoint signer when the database is behind, or forks from,
 * the newest checkpoint its key has signed (issue 26). Events appended to
 * such a database could never be signed under this log's origin, and would
 * be lost when the operator restores the newer database, so
 * {@link LedgerService.append} refuses them with 503 `log_unavailable`
 * instead of acknowledging them. Worker processes have no signer: they are
 * not gated.
 */
@Injectable()
export class AppendGate {
  private why: string | null = null;

  /** Why appends are refused now, or null. */
  get refusal(): string | null {
    return this.why;
  }

  /** Refuse appends from now on, saying `why`; null lets them through again. */
  set(why: string | null): void {
    this.why = why;
  }
}
