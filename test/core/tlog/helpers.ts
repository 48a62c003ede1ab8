import { isTlogError } from '../../../src/core/tlog';

/** The TlogError code `f` throws, or `ok` when it returns (any other error is rethrown). */
export function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isTlogError(e)) return e.code;
    throw e;
  }
  return 'ok';
}
