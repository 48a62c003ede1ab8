import type { Event } from '../ledger/event';

/**
 * Payloads erased (issue 29): who erased which events' payloads, when, why
 * and on what basis. `retained`: for each erased position (as a decimal
 * string), the event's data with its content removed
 * (src/core/ledger/retained.ts), from which projections replay the erased
 * event. Never erasable itself.
 */
export interface PayloadsErasedData {
  erasure_id: string;
  positions: number[];
  reason: string;
  legal_basis: string;
  erased_at: string;
  /** The key that erased (as the leaf also names it). */
  erased_by: { key_id: string; name: string };
  /** What asked for it: `request` (POST /api/erasures) or `retention` (the ledger's own retention run). */
  origin: 'request' | 'retention';
  retained: Record<string, Record<string, unknown>>;
}

export type PayloadsErased = Event<'PayloadsErased', PayloadsErasedData>;
export type ErasureEvent = PayloadsErased;
export const ERASURE_EVENT_TYPES: readonly ErasureEvent['type'][] = ['PayloadsErased'];
