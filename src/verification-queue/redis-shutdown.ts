/**
 * Shutting down while Redis is unreachable. BullMQ's close() ends each
 * connection with QUIT: a connection without an offline queue (the API's)
 * refuses it with an error that aborts the whole shutdown, and one with an
 * offline queue (the worker's) queues it until Redis returns, so SIGTERM never
 * ends the process. When Redis is down there is nothing to say to it: stop
 * reconnecting and mark the client ended, as BullMQ itself does after a close,
 * so its close() finds the connection closed.
 */
import type { QueueBase } from 'bullmq';

/** The connected client of a queue or worker; null when it never came up (waits at most `waitMs`). */
async function clientOf(q: QueueBase, waitMs: number): Promise<Awaited<QueueBase['client']> | null> {
  let timer: NodeJS.Timeout | undefined;
  const none = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
  try {
    return await Promise.race([q.client, none]).catch(() => null);
  } finally {
    clearTimeout(timer);
  }
}

/** True when the queue's or worker's Redis connection is not up now. */
export async function redisUnreachable(q: QueueBase, waitMs = 200): Promise<boolean> {
  const client = await clientOf(q, waitMs);
  return client === null || client.status !== 'ready';
}

/**
 * If Redis is unreachable, drop the connection of `q` so that its close()
 * neither fails nor waits. A connection that never came up is left alone:
 * BullMQ drops it itself.
 */
export async function dropConnectionIfUnreachable(q: QueueBase, waitMs = 200): Promise<void> {
  const client = await clientOf(q, waitMs);
  if (client && client.status !== 'ready' && client.status !== 'end') {
    client.disconnect();
    (client as { status: string }).status = 'end';
  }
}
