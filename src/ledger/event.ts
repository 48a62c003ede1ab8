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
 * so it is trusted, not validated (it was typed when appended). `data`: the
 * value the text was written from, when {@link isJsonClean} (the text
 * parses back to an equal value, so it is not parsed again).
 */
export function recordedEvent<E extends AnyEvent>(e: StoredEvent, data?: { value: unknown }): RecordedEvent<E> {
  return { type: e.type, data: data ? data.value : (JSON.parse(e.data) as unknown), position: e.position, stream_id: e.stream_id, stream_position: e.stream_position, recorded_at: e.recorded_at } as RecordedEvent<E>;
}

/**
 * True when `v` reads back from `JSON.parse(JSON.stringify(v))` as a value
 * equal to itself: null, booleans, strings, finite numbers other than -0,
 * arrays without holes and plain objects (prototype Object.prototype or
 * null) of such values, with no undefined, function, symbol or other object
 * inside, and no symbol keys. Such data can be handed to a projection as it
 * is instead of parsing the JSON text the ledger stored for it.
 */
export function isJsonClean(v: unknown, depth = 0): boolean {
  if (v === null) return true;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object': {
      if (depth > 32) return false;
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) return false;
        for (let i = 0; i < v.length; i++) if (!(i in v) || !isJsonClean(v[i], depth + 1)) return false;
        return Object.keys(v).length === v.length && Object.getOwnPropertySymbols(v).length === 0;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      if (Object.getOwnPropertySymbols(v).length > 0) return false;
      const names = Object.getOwnPropertyNames(v);
      if (names.length !== Object.keys(v).length) return false; // a non-enumerable member
      for (const k of names) {
        const d = Object.getOwnPropertyDescriptor(v, k)!;
        if (!('value' in d) || k === 'toJSON' || !isJsonClean(d.value, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
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
