/**
 * Result types shared by every AER-1 verifier in this package.
 *
 * A verifier never throws on attacker-controlled input: it returns a
 * {@link VerificationResult} whose `reasons` list every failing check it could
 * evaluate (spec README, reading 11), using the reason codes of
 * `../shared/vectors/README.md` ({@link ReasonCode}).
 */
import type { ReasonCode } from './reasons';

/** `valid` | `invalid` | `historical` (a -06 chain, S7.4) | `incomplete` (S8.2, step receipts not at hand). */
export type Verdict = 'valid' | 'invalid' | 'historical' | 'incomplete';

/** The kinds of document the core verifies. */
export type DocumentKind = 'receipt' | 'chain' | 'commitment' | 'workflow';

/** One named check. `ok: null` means the check could not be evaluated (its inputs were already invalid). */
export interface Check {
  name: string;
  ok: boolean | null;
  detail?: string;
}

/** Reason codes that make a result `incomplete` rather than `invalid`. */
export const INCOMPLETE_REASONS: ReadonlySet<string> = new Set<ReasonCode>([
  'step_receipts_unavailable',
  'step_receipt_missing',
]);

/** Reason codes that make a result `historical` rather than `invalid`. */
export const HISTORICAL_REASONS: ReadonlySet<string> = new Set<ReasonCode>(['historical_06_construction']);

/**
 * Collects checks and reasons in the order they are found; reasons are kept
 * unique, in first-seen order.
 */
export class Findings {
  readonly checks: Check[] = [];
  private readonly reasonSet = new Set<ReasonCode>();

  /** Record a check; when it failed, record its reason codes. */
  check(name: string, ok: boolean | null, detail?: string, ...reasons: ReasonCode[]): boolean {
    this.checks.push(detail === undefined ? { name, ok } : { name, ok, detail });
    if (ok === false) for (const r of reasons) this.reasonSet.add(r);
    return ok === true;
  }

  /** Record a reason without a check of its own. */
  reason(code: ReasonCode): void {
    this.reasonSet.add(code);
  }

  /** Remove a reason code (used when a -06 chain turns link failures into `historical`). */
  drop(code: ReasonCode): void {
    this.reasonSet.delete(code);
  }

  has(code: ReasonCode): boolean {
    return this.reasonSet.has(code);
  }

  get reasons(): ReasonCode[] {
    return [...this.reasonSet];
  }

  /** invalid > historical > incomplete > valid. */
  verdict(): Verdict {
    const reasons = this.reasons;
    if (reasons.some((r) => !INCOMPLETE_REASONS.has(r) && !HISTORICAL_REASONS.has(r))) return 'invalid';
    if (reasons.some((r) => HISTORICAL_REASONS.has(r))) return 'historical';
    if (reasons.length > 0) return 'incomplete';
    return 'valid';
  }
}

/** Common part of every result. */
export interface VerificationResultBase {
  kind: DocumentKind;
  verdict: Verdict;
  reasons: ReasonCode[];
  checks: Check[];
  /** What a passing result does not prove (S6 step 5, S7.3, S8.2 step 6). */
  limits: string[];
}

/** A JSON object as parsed; values are unknown until checked. */
export type JsonObject = { [key: string]: unknown };

/** True for a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True for a string with at least one character. */
export function isNonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/** Own-property test that ignores prototype members such as `__proto__` or `constructor`. */
export function has(o: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/** Short, printable description of a value for check details (never the whole value). */
export function describe(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
