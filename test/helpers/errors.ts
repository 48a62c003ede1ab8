import { LedgerError } from '../../src/common/errors';

/** The LedgerError `f` throws (fails the test when it throws nothing or something else). */
export function thrown(f: () => unknown): LedgerError {
  try {
    f();
  } catch (e) {
    if (e instanceof LedgerError) return e;
    throw e;
  }
  throw new Error('expected a LedgerError');
}
