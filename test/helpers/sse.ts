/** A minimal Server-Sent Events client for tests: node:http, parsed as the bytes arrive. */
import { request } from 'node:http';

export interface SseEvent {
  id: string | null;
  data: string;
}

export interface SseClient {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed events so far. */
  events: SseEvent[];
  /** Comment lines (without the leading colon) so far. */
  comments: string[];
  /** The body so far, when the answer is not a stream (an error). */
  body(): string;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  /** Wait until `pred` holds (checked as bytes arrive), at most `ms`. */
  until(pred: () => boolean, ms?: number): Promise<void>;
  /** Drop the connection. */
  close(): void;
}

/** Open `path` on `base` with `headers`; resolves once the status line and headers arrived. */
export function openSse(base: string, path: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      let buf = '';
      let raw = '';
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const checks = new Set<() => void>();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let id: string | null = null;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) events.push({ id, data: data.join('\n') });
        }
        for (const c of [...checks]) c();
      });
      const ended = new Promise<void>((r) => {
        res.on('end', () => r());
        res.on('close', () => r());
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        body: () => raw,
        ended,
        until: (pred, ms = 5000) =>
          new Promise<void>((ok, fail) => {
            if (pred()) return ok();
            const timer = setTimeout(() => {
              checks.delete(check);
              fail(new Error(`condition not met within ${ms} ms; events ${events.map((e) => e.id).join(',')}`));
            }, ms);
            const check = (): void => {
              if (pred()) {
                clearTimeout(timer);
                checks.delete(check);
                ok();
              }
            };
            checks.add(check);
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', (e) => reject(e));
    req.end();
  });
}
