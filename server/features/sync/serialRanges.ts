import type { Executor, Store } from '../../db/store.ts';
import type { SerialsGrantedT, SerialsInput, SyncChangeT } from '../../schemas/sync.ts';
import type { BatchService } from '../batches/index.ts';

type Counters = Pick<BatchService, 'reserveSerials' | 'serialsSeen'>;

/**
 * Batch serials unique per organization across instances (docs/sync.md, "Batch serials"): the
 * remote numbers every prefix. A site online asks it for each batch's numbers; a batch arriving
 * from elsewhere (pulled, pushed) moves the local numbering of its prefix past it, so the remote
 * never hands out numbers a site used offline, and an offline site continues after all it saw.
 */
export class SerialRanges {
  private readonly store: Store;
  private readonly counters: Counters;

  constructor(store: Store, counters: Counters) {
    this.store = store;
    this.counters = counters;
  }

  /** Remote side: `POST /v1/sync/serials`. */
  grant(orgId: string, input: SerialsInput): Promise<SerialsGrantedT> {
    return this.store.transaction(async (tx) => ({ serial_start: await this.counters.reserveSerials(tx, orgId, input.prefix, input.quantity) }));
  }

  async afterApply(tx: Executor, orgId: string, changes: readonly SyncChangeT[]): Promise<void> {
    for (const c of changes) {
      if (c.entity !== 'batch' || c.op !== 'upsert') continue;
      const { prefix, serial_start: start, quantity } = c.fields;
      if (typeof prefix === 'string' && typeof start === 'number' && typeof quantity === 'number') await this.counters.serialsSeen(tx, orgId, prefix, start + quantity);
    }
  }
}
