/**
 * Reading 9 ("`entry_count` must be a JSON integer") decided by the JSON
 * text of a commitment, where the caller has it (the ledger's POST body, the
 * CLI's commitment file): `7.0` and `7e0` are `invalid_commitment`, though
 * they parse to 7. See json-integer.ts.
 */
import { checkCommitment, commitmentFormatProblems, CommitmentResult } from './commitment';
import { memberText, writtenIntegerProblems } from './json-integer';
import { isObject } from './result';

/** Problems of the commitment at `at` in `text` that only its text shows (empty when none). */
export function commitmentTextProblems(text: string, at: readonly string[] = []): string[] {
  return writtenIntegerProblems(text, at, 'entry_count');
}

/**
 * `r` (a commitment checked from its parsed value) judged again with the
 * text: when `entry_count` is not written as an integer, the result a
 * malformed commitment gets (`invalid_commitment`, not binding, no member
 * compared), the commitment and witness kept as given. `at`: where the
 * commitment sits in `text` (`[]`, or `['commitment']` in an envelope).
 */
export function commitmentAsWritten(r: CommitmentResult, text: string, at: readonly string[] = []): CommitmentResult {
  const problems = commitmentTextProblems(text, at);
  if (problems.length === 0 || !isObject(r.commitment)) return r;
  const again = checkCommitment(r.timeline, { ...r.commitment, entry_count: null });
  const detail = [...commitmentFormatProblems(r.commitment), ...problems].join('; ');
  return { ...again, commitment: r.commitment, witness: r.witness, checks: again.checks.map((c) => (c.name === 'commitment.format' ? { ...c, detail } : c)) };
}

/**
 * For a checker that reads only the parsed value (the coverage
 * reconciliation): the commitment with an `entry_count` not written as an
 * integer replaced by its text (a string: `"7.0"`), so the value check calls
 * it malformed and the report shows what was written. Unchanged otherwise.
 */
export function commitmentValueAsWritten(value: unknown, text: string, at: readonly string[] = []): unknown {
  if (!isObject(value) || commitmentTextProblems(text, at).length === 0) return value;
  return { ...value, entry_count: memberText(text, [...at, 'entry_count']) };
}
