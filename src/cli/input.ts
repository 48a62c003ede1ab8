/**
 * Reading input for the CLI: a file or stdin (`-`), peeked at its first
 * non-white-space byte so a huge NDJSON file is never read whole, strict
 * UTF-8 checked before any JSON parsing (spec README reading 2, using the
 * core's {@link isStrictUtf8}), and split into lines on raw bytes so that
 * memory stays bounded by the longest line.
 */
import { createReadStream, statSync } from 'node:fs';
import { open as openFile, FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { decodeStrictUtf8, isBlankLine, isJsonSpace, LineSplitter, MAX_LINE_BYTES, parseJsonText, RawLine } from '../core/json';
import { CliError, CliIo, errorText } from './io';

export { isBlankLine, isJsonSpace, LineSplitter, MAX_LINE_BYTES } from '../core/json';
export type { RawLine } from '../core/json';

/**
 * The largest input read whole as one JSON document: about V8's longest
 * string, so nothing larger could be parsed anyway.
 */
export const MAX_DOCUMENT_BYTES = 512 * 1024 * 1024;

/** True for a byte that can begin a JSON text (after white space): `{ [ " -`, a digit, or `t f n`. */
export function canStartJson(b: number): boolean {
  return b === 0x7b || b === 0x5b || b === 0x22 || b === 0x2d || (b >= 0x30 && b <= 0x39) || b === 0x74 || b === 0x66 || b === 0x6e;
}

/** The message for a file that was written to while it was verified (the same on every path). */
export function changedWhileRead(name: string): string {
  return `${name} changed while it was read: verify a copy that is not being written`;
}

/** Size and modification time of a file, to tell whether it changed while it was read; null when it cannot be read. */
export function fileStamp(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}

/** Line numbers of NDJSON lines that are not JSON listed in a report (the rest are counted). */
export const NOT_JSON_LISTED = 20;

/** Read size for files. */
const READ_CHUNK = 1024 * 1024;

/**
 * An input opened for reading. {@link peek} reads only as far as the first
 * non-white-space byte; {@link chunks} then yields everything from the start,
 * {@link readAll} gathers it into one buffer.
 */
export class Input {
  private readonly head: Buffer[] = [];
  private headLen = 0;
  private iterator: AsyncIterator<unknown> | null = null;
  private done = false;
  private peeked = false;
  /** With `reuse`: the file, opened on the first read, and the one buffer every read fills. */
  private handle: Promise<FileHandle> | null = null;
  private readBuffer: Buffer | null = null;
  /** The first non-white-space byte, or null for empty / white-space-only input (after {@link peek}). */
  first: number | null = null;

  private constructor(
    /** The name used in messages: the path as given, or `stdin`. */
    readonly name: string,
    private readonly stream: Readable | null,
    private readonly stdinStream: Readable | null,
    private readonly path: string | null = null,
  ) {}

  /**
   * Open `file` (or stdin for `-`). Errors surface on the first read as {@link CliError}.
   *
   * `reuse: true` (a file only; for a reader that is done with each chunk
   * before asking for the next, as {@link splitLines} is) reads every chunk
   * into one buffer: a chunk yielded by {@link chunks} is overwritten by the
   * next read. No new buffer per read, so a long run leaves no megabyte
   * buffers behind for the garbage collector (peak memory independent of the
   * file's length). {@link readAll} must not be used then.
   */
  static open(file: string, io: CliIo, opts: { reuse?: boolean } = {}): Input {
    if (file === '-') return new Input('stdin', io.stdin, io.stdin);
    if (opts.reuse) return new Input(file, null, null, file);
    return new Input(file, createReadStream(file, { highWaterMark: READ_CHUNK }), null);
  }

  /** The next chunk of a `reuse` input: a view of the one read buffer. */
  private async nextReused(path: string): Promise<Buffer | null> {
    try {
      this.handle ??= openFile(path, 'r');
      const fh = await this.handle;
      this.readBuffer ??= Buffer.allocUnsafe(READ_CHUNK);
      const { bytesRead } = await fh.read(this.readBuffer, 0, this.readBuffer.length, null);
      if (bytesRead === 0) {
        this.close();
        return null;
      }
      return this.readBuffer.subarray(0, bytesRead);
    } catch (err) {
      this.close();
      throw new CliError(`cannot read ${this.name}: ${errorText(err)}`);
    }
  }

  private async nextChunk(): Promise<Buffer | null> {
    if (this.done) return null;
    if (this.stream === null) return this.nextReused(this.path as string);
    this.iterator ??= this.stream[Symbol.asyncIterator]();
    let r: IteratorResult<unknown>;
    try {
      r = await this.iterator.next();
    } catch (err) {
      this.done = true;
      throw new CliError(`cannot read ${this.name}: ${errorText(err)}`);
    }
    if (r.done) {
      this.done = true;
      return null;
    }
    const v = r.value;
    return Buffer.isBuffer(v) ? v : typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.from(v as Uint8Array);
  }

  /**
   * Read up to the first non-white-space byte (and at least 3 bytes, for the
   * BOM test). Rejects a leading UTF-8 byte order mark with a {@link CliError}.
   */
  async peek(): Promise<number | null> {
    if (this.peeked) return this.first;
    this.peeked = true;
    let scanned = 0;
    for (;;) {
      // Scan what is buffered.
      while (this.first === null && scanned < this.headLen) {
        const b = this.byteAt(scanned);
        if (!isJsonSpace(b)) this.first = b;
        else scanned++;
      }
      if (this.first !== null && this.headLen >= 3) break;
      const c = await this.nextChunk();
      if (c === null) break;
      if (c.length === 0) continue;
      // A reused read buffer is overwritten by the next read: keep a copy.
      this.head.push(this.stream === null ? Buffer.from(c) : c);
      this.headLen += c.length;
    }
    if (this.headLen >= 3 && this.byteAt(0) === 0xef && this.byteAt(1) === 0xbb && this.byteAt(2) === 0xbf) {
      this.close();
      throw new CliError(`${this.name} begins with a UTF-8 byte order mark; JSON input must not (remove the first 3 bytes)`);
    }
    return this.first;
  }

  /** The bytes read so far by {@link peek} (at least the first chunk read, up to 1 MiB of a file), without consuming them. */
  peekedBytes(): Buffer {
    return Buffer.concat(this.head);
  }

  private byteAt(i: number): number {
    for (const c of this.head) {
      if (i < c.length) return c[i];
      i -= c.length;
    }
    return -1;
  }

  /** All bytes from the start, peeked chunks first; constant memory when consumed as a stream. */
  async *chunks(): AsyncGenerator<Buffer> {
    while (this.head.length > 0) {
      const c = this.head.shift() as Buffer;
      this.headLen -= c.length;
      yield c;
    }
    for (;;) {
      const c = await this.nextChunk();
      if (c === null) return;
      yield c;
    }
  }

  /**
   * The whole input as one buffer. Throws CliError, having read no more than
   * {@link MAX_DOCUMENT_BYTES} (and a chunk), when the input is larger.
   */
  async readAll(): Promise<Buffer> {
    if (this.stream === null) throw new Error('Input.readAll on an input opened with reuse');
    const parts: Buffer[] = [];
    let total = 0;
    for await (const c of this.chunks()) {
      total += c.length;
      if (total > MAX_DOCUMENT_BYTES) {
        this.close();
        throw new CliError(
          `${this.name} is larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MiB: too large to read as one JSON document (an NDJSON timeline, one entry per line, is streamed in constant memory with --kind chain)`,
        );
      }
      parts.push(c);
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** Stop reading and release the file. */
  close(): void {
    this.done = true;
    // stdin belongs to the caller; a file stream is ours to release.
    if (this.stream !== null && this.stream !== this.stdinStream) this.stream.destroy();
    const h = this.handle;
    this.handle = null;
    if (h) h.then((fh) => fh.close()).catch(() => undefined);
  }
}

/**
 * Decode `bytes` as one JSON document: strict UTF-8 first, then `JSON.parse`.
 * Returns `{ok: false, why}` instead of throwing so callers can fall back
 * (a chain that does not parse whole is read as NDJSON).
 */
export function parseJsonBytes(
  bytes: Buffer,
): { ok: true; value: unknown; /** The decoded text (for rules only the text shows, e.g. reading 9's integers). */ text: string } | { ok: false; why: 'not_utf8' | 'too_large' | 'not_json'; detail: string; /** The member name that appears twice, when that is why. */ duplicate?: string } {
  const d = decodeStrictUtf8(bytes);
  if (!d.ok) {
    if (d.why === 'not_utf8') return { ok: false, why: 'not_utf8', detail: 'not valid UTF-8 (overlong, surrogate, out-of-range or truncated sequence)' };
    return { ok: false, why: 'too_large', detail: `too large to parse as one document (${bytes.length} bytes): ${errorText(d.error)}` };
  }
  const p = parseJsonText(d.text);
  if (p.ok) return { ok: true, value: p.value, text: d.text };
  if (p.why === 'not_json') return { ok: false, why: 'not_json', detail: jsonErrorDetail(errorText(p.error), d.text) };
  return { ok: false, why: 'not_json', duplicate: p.member, detail: `member ${JSON.stringify(p.member)} appears twice in one object (ambiguous: JSON parsers disagree on which one counts)` };
}

/** Line and column (1-based; the column counts UTF-16 code units, as V8's position does) of offset `at` in `text`. */
export function lineAndColumn(text: string, at: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: at - start + 1 };
}

/**
 * V8's JSON.parse message with the place as line and column instead of a
 * character position: "... in JSON at position 13" becomes "... at line 3
 * column 3"; "Unexpected end of JSON input" names the end; "Unexpected token
 * 'x', "<the text>" is not valid JSON" (no position) loses the echoed text.
 */
export function jsonErrorDetail(message: string, text: string): string {
  const at = /^(.*?)(?: in JSON)? at position (\d+)(.*)$/s.exec(message);
  if (at) {
    const { line, column } = lineAndColumn(text, Number(at[2]));
    return `${at[1]} at line ${line} column ${column}${at[3]}`;
  }
  if (/^Unexpected end of JSON input/.test(message)) {
    const { line, column } = lineAndColumn(text, text.length);
    return `unexpected end of the JSON text at line ${line} column ${column}`;
  }
  const token = /^(Unexpected token '.*?'), ".*" is not valid JSON$/s.exec(message);
  if (token) {
    const off = jsonErrorOffset(text);
    if (off < 0) return `${token[1]} (not valid JSON)`;
    const { line, column } = lineAndColumn(text, off);
    return `${token[1]} at line ${line} column ${column}`;
  }
  return message;
}

/** Offset of the first byte where `text` stops being JSON (a small RFC 8259 scanner), or -1 when it cannot tell. */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const n = text.length;
  const ws = (): void => {
    while (i < n && isJsonSpace(text.charCodeAt(i))) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) return void i++;
      for (;;) {
        if (c === '{') {
          ws();
          if (text[i] !== '"') fail();
          value();
          ws();
          if (text[i] !== ':') fail();
          i++;
        }
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === close) return void i++;
        else fail();
      }
    }
    if (c === '"') {
      for (i++; i < n && text[i] !== '"'; i++) {
        if (text.charCodeAt(i) < 0x20) fail();
        if (text[i] === '\\') i++;
      }
      if (i >= n) fail();
      return void i++;
    }
    const m = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null/y;
    m.lastIndex = i;
    const t = m.exec(text);
    if (!t) fail();
    i += (t as RegExpExecArray)[0].length;
  };
  try {
    value();
    ws();
    return i < n ? i : -1;
  } catch (e) {
    return typeof e === 'number' ? e : -1;
  }
}

/**
 * Read `input` whole and parse it as one JSON document, or throw a
 * {@link CliError} (`FILE is not JSON: reason`, `FILE is not valid UTF-8`,
 * `FILE is empty`).
 */
export async function readJsonDocument(input: Input): Promise<unknown> {
  return (await readJsonDocumentBytes(input)).value;
}

/** {@link readJsonDocument}, with the bytes read (for checks that need the JSON text, e.g. reading 9's integers). */
export async function readJsonDocumentBytes(input: Input): Promise<{ value: unknown; bytes: Buffer }> {
  const first = await input.peek();
  if (first === null) {
    input.close();
    throw new CliError(`${input.name} is empty (no bytes, or only white space)`);
  }
  const bytes = await input.readAll();
  const r = parseJsonBytes(bytes);
  if (r.ok) return { value: r.value, bytes };
  throw new CliError(r.why === 'not_json' ? `${input.name} is not JSON: ${r.detail}` : `${input.name} is ${r.detail}`);
}

/**
 * {@link LineSplitter} over a byte stream, as an async iterator of lines.
 * A yielded buffer may share memory with its input chunk.
 */
export async function* splitLines(chunks: AsyncIterable<Buffer>, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<RawLine> {
  const splitter = new LineSplitter(maxLineBytes);
  const lines: RawLine[] = [];
  const collect = (line: RawLine): void => {
    lines.push(line);
  };
  for await (const chunk of chunks) {
    splitter.push(chunk, collect);
    yield* lines.splice(0);
  }
  splitter.end(collect);
  yield* lines.splice(0);
}

/** The outcome of reading one NDJSON line. */
export type LineValue =
  | { type: 'blank' }
  | { type: 'json'; value: unknown; /** The line's text, decoded. */ text: string }
  | { type: 'bad'; why: 'too_long' | 'not_utf8' | 'not_json' | 'duplicate_member'; detail: string };

/** Classify and parse one NDJSON line: blank (only JSON white space), a JSON value, or bad. */
export function parseLine(line: RawLine): LineValue {
  const b = line.bytes;
  if (b === null) return { type: 'bad', why: 'too_long', detail: `longer than ${MAX_LINE_BYTES} bytes` };
  if (isBlankLine(b)) return { type: 'blank' };
  const r = parseJsonBytes(b);
  if (r.ok) return { type: 'json', value: r.value, text: r.text };
  return { type: 'bad', why: r.why === 'not_utf8' ? 'not_utf8' : r.duplicate !== undefined ? 'duplicate_member' : 'not_json', detail: r.detail };
}

/** What was read of an NDJSON timeline, line by line. */
export interface LineCounts {
  /** Lines read, blank ones included. */
  lines: number;
  blank_lines: number;
  /** Lines that were not JSON (or not UTF-8, or too long): each counted as an invalid entry. */
  not_json_lines: number;
  /** Line numbers of the first {@link NOT_JSON_LISTED} lines that were not JSON. */
  not_json_at: number[];
}

/**
 * How each line of an NDJSON timeline reaches a timeline verifier, on one
 * thread or in a worker's range alike: a blank line is skipped, a line that
 * is not JSON (or not UTF-8, or too long) is pushed as a non-object, which
 * the verifier records as an invalid entry, and the run goes on.
 */
export function timelineLineReader(verifier: { push(entry: unknown): void }, counts: LineCounts): (line: RawLine) => void {
  return (line) => {
    counts.lines++;
    const p = parseLine(line);
    if (p.type === 'blank') {
      counts.blank_lines++;
    } else if (p.type === 'bad') {
      counts.not_json_lines++;
      if (counts.not_json_at.length < NOT_JSON_LISTED) counts.not_json_at.push(line.no);
      verifier.push(undefined);
    } else {
      verifier.push(p.value);
    }
  };
}
