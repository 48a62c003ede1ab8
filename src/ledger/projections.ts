import { Injectable } from '@nestjs/common';
import { Tx } from '../database/database.service';
import { StoredEvent } from '../core/ledger/event-hash';

/**
 * A read model built from events (Emmett's projection): `evolve` applies one
 * event inside the transaction that appends it, and again, in position
 * order, when projections are rebuilt from the ledger.
 */
export interface Projection {
  readonly name: string;
  /** Tables this projection owns; emptied before a rebuild. */
  readonly tables: readonly string[];
  canHandle(type: string): boolean;
  evolve(tx: Tx, event: StoredEvent): Promise<void>;
}

/** Every projection registers itself here at module init. */
@Injectable()
export class ProjectionRegistry {
  private readonly projections: Projection[] = [];

  register(p: Projection): void {
    if (!this.projections.some((q) => q.name === p.name)) this.projections.push(p);
  }

  all(): readonly Projection[] {
    return this.projections;
  }

  /** Apply one stored event to every projection that handles its type. */
  async apply(tx: Tx, event: StoredEvent): Promise<void> {
    for (const p of this.projections) if (p.canHandle(event.type)) await p.evolve(tx, event);
  }
}
