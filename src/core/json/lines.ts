/**
 * NDJSON lines on raw bytes: split at LF (a trailing CR dropped), never
 * decoded here, so each line is checked as strict UTF-8 on its own and
 * memory stays bounded by the longest line. The server splits a request body
 * with it, the CLI its streams (one chunk at a time, in worker threads too).
 */
import { isJsonSpace } from './text';

/** Longest NDJSON line accepted (bytes); a longer line counts as a bad line and is skipped, never buffered. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** One line of NDJSON: 1-based number and its bytes without the line break (null when longer than the limit). */
export interface RawLine {
  no: number;
  bytes: Buffer | null;
  /** Byte offsets of the line in the input (from the splitter's `firstByte`): its first byte, and the LF that ends it (or the input's end). */
  start: number;
  end: number;
}

/**
 * Splits bytes into lines at LF (a trailing CR is dropped), without
 * decoding and synchronously, one chunk at a time: memory is bounded by the
 * longest line, and a line longer than `maxLineBytes` is reported with
 * `bytes: null` and never buffered. A line handed to `onLine` may share
 * memory with the chunk it came from, so chunks may be one reused buffer
 * (a part of a line left at the end of a chunk is copied).
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private partsLen = 0;
  private overflow = false;
  private no: number;
  /** Offset of the next chunk's first byte. */
  private offset: number;
  /** Offset of the line being gathered. */
  private lineStart: number;

  /** `firstLineNo`: the number of the first line (1 for a whole input); `firstByte`: the offset of the first byte. */
  constructor(
    private readonly maxLineBytes = MAX_LINE_BYTES,
    firstLineNo = 1,
    firstByte = 0,
  ) {
    this.no = firstLineNo - 1;
    this.offset = firstByte;
    this.lineStart = firstByte;
  }

  /** Hand every line that `chunk` completes to `onLine`, in order. */
  push(chunk: Buffer, onLine: (line: RawLine) => void): void {
    let start = 0;
    const base = this.offset;
    this.offset += chunk.length;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        const tail = chunk.subarray(start);
        if (!this.overflow && tail.length > 0) {
          if (this.partsLen + tail.length > this.maxLineBytes) {
            this.overflow = true;
            this.parts = [];
            this.partsLen = 0;
          } else {
            // Copied: the chunk may be a reused read buffer (and a large chunk can then be freed).
            this.parts.push(Buffer.from(tail));
            this.partsLen += tail.length;
          }
        }
        return;
      }
      onLine(this.take(chunk.subarray(start, nl), base + nl));
      start = nl + 1;
    }
  }

  /** The end of the input: hand over a last line that has no LF after it. */
  end(onLine: (line: RawLine) => void): void {
    if (this.overflow || this.partsLen > 0) onLine(this.take(Buffer.alloc(0), this.offset));
  }

  private take(piece: Buffer, end: number): RawLine {
    const start = this.lineStart;
    this.lineStart = end + 1;
    this.no++;
    let bytes: Buffer | null = null;
    if (!this.overflow && this.partsLen + piece.length <= this.maxLineBytes) {
      bytes = this.parts.length === 0 ? piece : Buffer.concat([...this.parts, piece]);
      if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    }
    this.parts = [];
    this.partsLen = 0;
    this.overflow = false;
    return { no: this.no, bytes, start, end };
  }
}

/** True when a line has only JSON white space (NDJSON skips it). */
export function isBlankLine(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (!isJsonSpace(bytes[i])) return false;
  return true;
}
