/**
 * Events as typed values (Emmett's `Event<Type, Data>`): each stream has its
 * own union in `<module>/<module>.events.ts`, the ledger appends only that
 * union, and projections and readers parse stored events back into it.
 */
import type { StoredEvent } from '../core/ledger/event-hash';

/** An event to append: a past-tense `type` and its JSON `data`. */
export interface Event<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
}

/** Any event of any stream. */
export type AnyEvent = Event<string, unknown>;

/** A stored event with its data parsed as one of the union `E` (the ledger metadata kept beside it). */
export type RecordedEvent<E extends AnyEvent> = E & Pick<StoredEvent, 'position' | 'stream_id' | 'stream_position' | 'recorded_at'>;

/**
 * The stored event `e` as a member of `E`, whose `types` list its event
 * types. The data is the JSON the ledger wrote for an event of that type,
 * so it is trusted, not validated (it was typed when appended).
 */
export function recordedEvent<E extends AnyEvent>(e: StoredEvent): RecordedEvent<E> {
  return { type: e.type, data: JSON.parse(e.data) as unknown, position: e.position, stream_id: e.stream_id, stream_position: e.stream_position, recorded_at: e.recorded_at } as RecordedEvent<E>;
}

/** An event's data from its stored JSON text, as the type `E` gives it for `type`. */
export function eventData<E extends AnyEvent, T extends E['type']>(_type: T, json: string): Extract<E, { type: T }>['data'] {
  return JSON.parse(json) as Extract<E, { type: T }>['data'];
}

/**
 * Expected versions of an append, one meaning each:
 * - {@link STREAM_DOES_NOT_EXIST}: the stream must be empty. The caller has
 *   established it inside the same write transaction (a fresh UUID, or no row
 *   in the read model the transaction keeps), so no version query runs; the
 *   `UNIQUE (stream_id, stream_position)` constraint still refuses a second
 *   first event.
 * - a number: the stream must be at exactly this version, else 409
 *   `expected_version_conflict`. Use it for a version a client named.
 * - {@link NO_CONCURRENCY_CHECK}: append after whatever the stream holds.
 *   Used where the decision was made on state read inside the same
 *   serialized write transaction: nothing can append in between, so a version
 *   check there could never fail, and none is pretended.
 */
export const STREAM_DOES_NOT_EXIST = Symbol('STREAM_DOES_NOT_EXIST');
export const NO_CONCURRENCY_CHECK = Symbol('NO_CONCURRENCY_CHECK');
export type ExpectedVersion = number | typeof STREAM_DOES_NOT_EXIST | typeof NO_CONCURRENCY_CHECK;
