/**
 * Streams, exit codes and errors shared by every `aer1` subcommand.
 *
 * Nothing here touches `process` directly: `run()` receives its streams, so
 * tests call the CLI in-process and a subcommand never exits the process.
 */
import type { Readable, Writable } from 'node:stream';

/** The streams a CLI run reads and writes. */
export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
}

/** Exit codes: 0 valid, 1 invalid / historical / incomplete (or a failed conformance vector), 2 usage or input error. */
export const EXIT_OK = 0;
export const EXIT_NOT_VALID = 1;
export const EXIT_USAGE = 2;

/**
 * An error that ends the run with a one-line message on stderr and exit
 * code 2: bad arguments, unreadable or unparseable input. The message is
 * printed as `aer1: <message>`.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_USAGE,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Thrown when stdout was closed by the reader (EPIPE): stop quietly. */
export class OutputClosedError extends Error {
  constructor() {
    super('output closed');
    this.name = 'OutputClosedError';
  }
}

/** Mutable state shared by the commands of one run (commander actions cannot return values). */
export interface RunContext {
  io: CliIo;
  exitCode: number;
}

/** The first line of an error message with the code of a system error, never a stack. */
export function errorText(err: unknown): string {
  // Duck-typed, not instanceof: errors from another realm (vm contexts, test runners) are still errors.
  if (typeof err === 'object' && err !== null && typeof (err as Error).message === 'string') {
    const e = err as NodeJS.ErrnoException;
    const code = e.code;
    let msg = e.message || String(code ?? e.name);
    // Node system errors read "ENOENT: no such file or directory, open 'x'" or
    // "EISDIR: illegal operation on a directory, read": keep "CODE: description".
    if (typeof code === 'string') {
      msg = msg.replace(/, [a-z]+( '.*')?$/s, '');
      if (!msg.startsWith(code)) msg = `${code}: ${msg}`;
    }
    return firstLine(msg);
  }
  return firstLine(String(err));
}

/** Collapse a message onto one line. */
export function firstLine(s: string): string {
  return s.replace(/\s*\r?\n\s*/g, ' ').trim();
}

/**
 * Buffered writer with backpressure: output is gathered into chunks of
 * `chunkSize` characters; when the stream's buffer is full, `write` waits
 * for `drain`. A closed reader (EPIPE, or a destroyed stream) raises
 * {@link OutputClosedError}.
 */
export class OutputWriter {
  private buf = '';
  private closed = false;
  private readonly onError = (err: NodeJS.ErrnoException): void => {
    this.closed = true;
    this.error = err;
  };
  private error: NodeJS.ErrnoException | null = null;

  constructor(
    private readonly stream: Writable,
    private readonly chunkSize = 64 * 1024,
  ) {
    stream.on('error', this.onError);
  }

  /** Queue `s`; flushes when the buffer is full. */
  async write(s: string): Promise<void> {
    this.buf += s;
    if (this.buf.length >= this.chunkSize) await this.flush();
  }

  /** Write what is buffered, waiting for `drain` when the stream asks for it. */
  async flush(): Promise<void> {
    if (this.closed || this.stream.destroyed || this.stream.writableEnded) throw new OutputClosedError();
    if (this.buf.length === 0) return;
    const chunk = this.buf;
    this.buf = '';
    if (!this.stream.write(chunk)) {
      await waitForDrain(this.stream);
      if (this.closed || this.stream.destroyed) throw new OutputClosedError();
    }
  }

  /** Flush and detach; call once at the end of the command. */
  async end(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.stream.off('error', this.onError);
    }
  }

  /** Detach without flushing (after an error). */
  detach(): void {
    this.stream.off('error', this.onError);
  }
}

/**
 * Resolve on 'drain' or 'close', reject with {@link OutputClosedError} on
 * 'error'; every listener is removed again, whichever event comes first
 * (a leftover listener per wait would leak over a million-line run).
 */
function waitForDrain(stream: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const cleanup = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', fail);
    };
    const done = (): void => {
      cleanup();
      resolve();
    };
    const fail = (): void => {
      cleanup();
      reject(new OutputClosedError());
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', fail);
  });
}

/** Write `s` to `stream` and wait for `drain` if its buffer is full. */
export async function writeAll(stream: Writable, s: string): Promise<void> {
  const w = new OutputWriter(stream, Number.MAX_SAFE_INTEGER);
  await w.write(s);
  await w.end();
}
