import { Tx } from '../database/database.service';
import { AnyEvent, isJsonClean, RecordedEvent, recordedEvent } from './event';
import { payloadState, StoredEvent } from '../core/ledger/event-hash';

/**
 * A read model built from events (Emmett's projection): `evolve` applies one
 * event of its streams' union `E` inside the transaction that appends it,
 * and again, in position order, when projections are rebuilt from the ledger.
 * `evolve` switches over `event.type` and writes through its repository.
 */
export interface Projection<E extends AnyEvent = AnyEvent> {
  readonly name: string;
  /** Tables this projection owns; emptied before a rebuild. */
  readonly tables: readonly string[];
  /** The event types it handles: exactly the members of `E`. */
  readonly eventTypes: readonly E['type'][];
  evolve(tx: Tx, event: RecordedEvent<E>): Promise<void>;
  /**
   * Optional, for records with many events (a job's timeline): the rows of
   * `tables` that `evolve` writes for the events of one stream, in position
   * order, computed without a database (stored form: booleans 0/1, lists as
   * JSON text). A column whose value is {@link UNCHECKED} is not compared.
   * The per-record guard uses it instead of replaying into a scratch
   * database; it must agree with `evolve` (the projection audit, which
   * replays through `evolve`, and the tampering tests check both).
   */
  expectedRows?(events: readonly RecordedEvent<E>[]): Record<string, Record<string, unknown>[]>;
  /**
   * Optional (issue 29): clear the content of the rows written for the events
   * at `positions`, whose payloads a `PayloadsErased` event erased, to exactly
   * what `evolve` writes from their retained data (src/core/ledger/retained.ts):
   * `raw` '' and content hashes null. Idempotent: on a replay the rows were
   * already written from the retained data.
   */
  erasePayloads?(tx: Tx, positions: readonly number[]): Promise<void>;
}

/** The retained data of erased events by position (from the `PayloadsErased` events), for replaying them. */
export type RetainedPayloads = ReadonlyMap<number, unknown>;

/** A replayed event whose payload was erased, with no `PayloadsErased` event retaining its data: it cannot be replayed. */
export class ErasedPayloadError extends Error {
  constructor(readonly position: number) {
    super(`the payload of the event at position ${position} was erased and no PayloadsErased event retains its data`);
  }
}

/** A column value the per-record guard does not compare (see {@link Projection.expectedRows}). */
export const UNCHECKED = Symbol('unchecked');

/**
 * The projections an event is applied to, in their order. The one list of the
 * service's projections is `src/projections.ts` (`projectionRegistry()`): the
 * server (`ProjectionsModule`) and the offline tools build their registry from it.
 */
export class ProjectionRegistry {
  private readonly projections: readonly Projection[];

  /** `projections`: each at most once by name (a repeated name is an Error). */
  constructor(projections: readonly Projection[]) {
    const names = new Set<string>();
    for (const p of projections) {
      if (names.has(p.name)) throw new Error(`projection ${p.name} is listed twice`);
      names.add(p.name);
    }
    this.projections = projections;
  }

  all(): readonly Projection[] {
    return this.projections;
  }

  /** Every table of every registered projection, in registration order. */
  tables(): string[] {
    return this.projections.flatMap((p) => [...p.tables]);
  }

  /** The projection that owns `table`, if any. */
  owner(table: string): Projection | undefined {
    return this.projections.find((p) => p.tables.includes(table));
  }

  /**
   * Apply one stored event to every projection that handles its type (its
   * data parsed once). `data`: the value `event.data` was written from by
   * JSON.stringify, when the caller has it; used as is when
   * {@link isJsonClean} (it equals what parsing the text gives), else the
   * text is parsed, as a rebuild from the ledger does.
   */
  async apply(tx: Tx, event: StoredEvent, data?: unknown, retained?: RetainedPayloads): Promise<void> {
    let parsed: RecordedEvent<AnyEvent> | undefined;
    if (data === undefined && payloadState(event) === 'erased') {
      // Erased (issue 29): replayed from the data its PayloadsErased event retains.
      const kept = retained?.get(Number(event.position));
      if (kept === undefined) throw new ErasedPayloadError(Number(event.position));
      parsed = recordedEvent(event, { value: kept });
    }
    for (const p of this.projections) {
      if (p.eventTypes.includes(event.type)) await p.evolve(tx, (parsed ??= recordedEvent(event, data !== undefined && isJsonClean(data) ? { value: data } : undefined)));
    }
    if (event.type === 'PayloadsErased') {
      parsed ??= recordedEvent(event, data !== undefined && isJsonClean(data) ? { value: data } : undefined);
      const positions = (parsed.data as { positions?: unknown }).positions;
      if (Array.isArray(positions)) for (const p of this.projections) if (p.erasePayloads) await p.erasePayloads(tx, positions as number[]);
    }
  }
}

/** For a `switch (event.type)` that must handle every member of a union: a compile error when one is missed. */
export function unhandled(event: never): never {
  const type: unknown = typeof event === 'object' && event !== null ? (event as { type?: unknown }).type : event;
  throw new Error(`unhandled event ${JSON.stringify(type)}`);
}
