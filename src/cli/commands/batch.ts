/**
 * `aer1 verify --batch [--json] FILE|-`: NDJSON in, one result per line
 * out, in order, in constant memory (lines are split on raw bytes; output
 * is buffered and waits for `drain` when the reader is slower).
 */
import { DocumentKind, has, isObject, Verdict, verifyDocumentText } from '../../core/aer1';
import { Input, LineValue, parseLine, splitLines } from '../input';
import { CliIo, EXIT_NOT_VALID, EXIT_OK, OutputWriter } from '../io';
import { safe } from '../report';
import type { KindOption } from './verify';

/** One output line of `--batch --json`, members in this order. */
export interface BatchRecord {
  /** 1-based number of the input line (blank lines have no record). */
  line: number;
  id: string | number | null;
  kind: DocumentKind | null;
  verdict: Verdict;
  reasons: string[];
}

const KINDS: ReadonlySet<string> = new Set(['receipt', 'chain', 'commitment', 'workflow']);

/**
 * Verify one batch line. `defaultKind` applies when the line has no `kind`
 * (or `"auto"`); the reported kind is the kind verified (inferred for auto).
 * `id` is echoed when it is a string or a number, else null.
 */
export function verifyBatchLine(lineNo: number, line: LineValue, defaultKind: KindOption = 'auto'): BatchRecord | null {
  if (line.type === 'blank') return null;
  if (line.type === 'bad') return { line: lineNo, id: null, kind: null, verdict: 'invalid', reasons: [line.why === 'duplicate_member' ? 'duplicate_member' : 'not_json'] };
  const v = line.value;
  if (!isObject(v)) return { line: lineNo, id: null, kind: null, verdict: 'invalid', reasons: ['not_object'] };
  const id = typeof v.id === 'string' || (typeof v.id === 'number' && Number.isFinite(v.id)) ? v.id : null;
  let kind: KindOption = defaultKind;
  if (has(v, 'kind') && v.kind !== 'auto') {
    if (typeof v.kind !== 'string' || !KINDS.has(v.kind)) return { line: lineNo, id, kind: null, verdict: 'invalid', reasons: ['invalid_field:kind'] };
    kind = v.kind as DocumentKind;
  }
  if (!has(v, 'input')) return { line: lineNo, id, kind: kind === 'auto' ? null : kind, verdict: 'invalid', reasons: ['missing_field:input'] };
  // The same rules as for a file (reading 9's integers by the text): the document is the line's `input` member.
  const r = verifyDocumentText(v.input, line.text, ['input'], kind);
  return { line: lineNo, id, kind: r.kind, verdict: r.verdict, reasons: r.reasons };
}

/** Run a batch; returns the exit code (0 when every line is valid). */
export async function runBatch(file: string, opts: { json: boolean; kind: KindOption }, io: CliIo): Promise<number> {
  // Lines are done with before the next read: one read buffer for the whole file.
  const input = Input.open(file, io, { reuse: true });
  const out = new OutputWriter(io.stdout);
  const counts: Record<Verdict, number> = { valid: 0, invalid: 0, historical: 0, incomplete: 0 };
  let total = 0;
  try {
    await input.peek(); // rejects a leading BOM before any output
    for await (const line of splitLines(input.chunks())) {
      const rec = verifyBatchLine(line.no, parseLine(line), opts.kind);
      if (rec === null) continue;
      total++;
      counts[rec.verdict]++;
      if (opts.json) {
        await out.write(JSON.stringify(rec) + '\n');
      } else if (rec.verdict !== 'valid') {
        const id = rec.id === null ? 'id=null' : `id=${safe(String(rec.id), 80)}`;
        await out.write(`line ${line.no}  ${id}  ${rec.kind ?? '-'}  ${rec.verdict.toUpperCase()}  ${rec.reasons.join(', ')}\n`);
      }
    }
    if (!opts.json) {
      await out.write(`${total} documents: ${counts.valid} valid, ${counts.invalid} invalid, ${counts.historical} historical, ${counts.incomplete} incomplete\n`);
    }
    await out.end();
  } finally {
    out.detach();
    input.close();
  }
  return total === counts.valid ? EXIT_OK : EXIT_NOT_VALID;
}
