/**
 * What a file given to an `aer1` command is, when it is not what the command
 * reads (issue 27): a server's saved error answer (`{"error": "<code>",
 * "message": ...}`, as src/common/error.filter.ts writes it) for every
 * command, and for `aer1 verify` the project's other files (a coverage plan,
 * a log proof file, an evidence pack, a coverage report, a checkpoint or a
 * signed commitment note), each named with the command that reads it.
 * Shapes only, and only clear ones: a value with any receipt member is never
 * called something else (a malformed receipt stays a receipt, exit 1).
 */
import { readFileSync, statSync } from 'node:fs';
import { isObject } from '../core/aer1';
import { REPORT_FORMAT } from '../core/coverage/types';
import { PROOF_FILE_HEADER } from '../core/tlog/proof-file';
import { parseJsonBytes } from './input';
import { CliError } from './io';
import { safe } from './report';

/** The `format` of a JSON log proof file (src/core/tlog/log-proof.ts). */
const JSON_PROOF_FORMAT = 'aer1-log-proof/1';

/** Members only an AER-1 receipt (or its JSON-RPC wrapping) has: any of them and the value is judged as a receipt. */
const RECEIPT_MEMBERS = ['receipt_schema_version', 'canonical_bytes', 'output_hash', 'verification_status', 'provenance_class', 'tool', 'jsonrpc', 'result', 'created_at'];

/** A server's error answer: its reason code and message. */
export interface ErrorAnswer {
  code: string;
  message: string;
}

/**
 * `doc` as a server's error answer (`{"error": "<code>", "message": "...",
 * ...details}`, a code in snake case), or null. A document with a `report`
 * or any receipt member is not one.
 */
export function errorAnswerOf(doc: unknown): ErrorAnswer | null {
  if (!isObject(doc) || typeof doc.error !== 'string' || typeof doc.message !== 'string') return null;
  if (!/^[a-z][a-z0-9_]{0,80}$/.test(doc.error) || 'report' in doc || RECEIPT_MEMBERS.some((m) => m in doc)) return null;
  return { code: doc.error, message: doc.message };
}

/** The one wording of a saved error answer: `NAME is a saved error answer, not WHAT: the server answered CODE: MESSAGE`. */
export function errorAnswerText(name: string, a: ErrorAnswer, what: string): string {
  return `${name} is a saved error answer, not ${what}: the server answered ${safe(a.code, 80)}: ${safe(a.message, 300)}`;
}

/** Throw the {@link CliError} (exit 2) of {@link errorAnswerText} when `doc` is a server's error answer. */
export function refuseErrorAnswer(doc: unknown, name: string, what: string): void {
  const a = errorAnswerOf(doc);
  if (a) throw new CliError(errorAnswerText(name, a, what));
}

/** The largest file read whole to see whether it is an error answer (the server's are a few hundred bytes). */
const ERROR_ANSWER_MAX_BYTES = 64 * 1024;

/**
 * For a command that reads its file its own way (an evidence pack line by
 * line): the file as a server's error answer, when it is a small file
 * holding one JSON value that is one; else null (also when unreadable: the
 * command's own read reports that).
 */
export function errorAnswerInFile(path: string): ErrorAnswer | null {
  try {
    if (statSync(path).size > ERROR_ANSWER_MAX_BYTES) return null;
    const p = parseJsonBytes(readFileSync(path));
    return p.ok ? errorAnswerOf(p.value) : null;
  } catch {
    return null;
  }
}

/**
 * What a parsed JSON value that `aer1 verify` was given is, when it is
 * clearly one of the project's other files, with the command to use; else
 * null. Asked only with `--kind auto`.
 */
export function otherDocumentHint(doc: unknown): string | null {
  if (!isObject(doc) || RECEIPT_MEMBERS.some((m) => m in doc)) return null;
  if (Array.isArray(doc.expected_actions) && !('timeline' in doc)) return 'a coverage plan, not an AER-1 document: use aer1 coverage --plan FILE --timeline TIMELINE --receipts RECEIPTS';
  if (doc.format === JSON_PROOF_FORMAT) return 'a log proof file, not an AER-1 document: use aer1 log verify-proof FILE --vkey LOG_VKEY';
  if (doc.format === REPORT_FORMAT) return 'a coverage report, not an AER-1 document: check the server\'s answer (GET /api/coverage-reports/{id}) with aer1 coverage --check-report';
  if (typeof doc.member === 'string' && (doc.member === 'header' || doc.member === 'manifest' || doc.member.startsWith('event/'))) return 'an evidence pack (aer1-evidence-pack/1), not an AER-1 document: use aer1 verify-pack FILE --vkey LOG_VKEY';
  return null;
}

/**
 * What a file that is not one JSON value is, when its text clearly shows it:
 * an evidence pack (its first line a pack member), a C2SP log proof file, a
 * signed commitment note, a checkpoint. Else null.
 */
export function otherTextHint(bytes: Buffer): string | null {
  const nl = bytes.indexOf(0x0a);
  const firstLine = bytes.subarray(0, nl < 0 ? bytes.length : nl).toString('utf8');
  if (firstLine === PROOF_FILE_HEADER) return `a log proof file (${PROOF_FILE_HEADER}), not an AER-1 document: use aer1 log verify-proof FILE --vkey LOG_VKEY`;
  if (firstLine.startsWith('{"member"')) {
    let first: unknown;
    try {
      first = JSON.parse(firstLine);
    } catch {
      return null;
    }
    return otherDocumentHint(first);
  }
  const text = bytes.toString('utf8');
  const sig = text.indexOf('\n\n\u2014 ');
  if (sig < 0) return null;
  const body = text.slice(0, sig + 1);
  if (/^[^\n]+\n[0-9]+\n[A-Za-z0-9+/]+=*\n/.test(body)) {
    return 'a log checkpoint (a signed note), not an AER-1 document: a checkpoint is checked with what it signs: aer1 log verify-proof, aer1 verify-pack';
  }
  if (body.trimStart().startsWith('{') && body.includes('"final_entry_digest"')) {
    return 'a signed endpoint commitment note, not a timeline: give it with the timeline: aer1 verify --kind chain --commitment FILE TIMELINE';
  }
  return null;
}
