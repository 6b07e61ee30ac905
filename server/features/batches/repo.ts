import { sql } from 'kysely';
import type { Dialect, Executor } from '../../db/store.ts';
import type { BatchStatus, FunctionType } from '../../schemas/common.ts';

export interface BatchRow {
  id: string;
  org_id: string;
  label: string;
  prefix: string;
  quantity: number;
  serial_start: number;
  /** Numbered by a paired site offline: may repeat another site's (docs/sync.md, "Batch serials"). */
  serials_provisional: boolean;
  function_type: FunctionType;
  base_payload: Record<string, unknown> | null;
  template_id: string | null;
  status: BatchStatus;
  failure_reason: string | null;
  nodes_generated: number;
  created_at: string;
  updated_at: string;
}

/** Who generates a batch, until when (migration 064). */
export interface BatchLease {
  lease_owner: string | null;
  lease_until: string | null;
}

const COLUMNS = [
  'id',
  'org_id',
  'label',
  'prefix',
  'quantity',
  'serial_start',
  'serials_provisional',
  'function_type',
  'base_payload_json',
  'template_id',
  'status',
  'failure_reason',
  'nodes_generated',
  'created_at',
  'updated_at',
] as const;

type Stored = Omit<BatchRow, 'base_payload' | 'function_type' | 'status' | 'serials_provisional'> & { function_type: string; status: string; base_payload_json: string | null; serials_provisional: number };

function fromStored({ base_payload_json, serials_provisional, ...rest }: Stored): BatchRow {
  return {
    ...rest,
    serials_provisional: serials_provisional === 1,
    function_type: rest.function_type as FunctionType,
    status: rest.status as BatchStatus,
    base_payload: base_payload_json === null ? null : (JSON.parse(base_payload_json) as Record<string, unknown>),
  };
}

export class BatchesRepo {
  private readonly dialect: Dialect;

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  async get(db: Executor, orgId: string, id: string): Promise<BatchRow | undefined> {
    const row = await db.selectFrom('batches').select(COLUMNS).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row && fromStored(row);
  }

  async getById(db: Executor, id: string): Promise<BatchRow | undefined> {
    const row = await db.selectFrom('batches').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && fromStored(row);
  }

  /**
   * The batch with its lease, its row locked until the transaction ends (PostgreSQL): chunks of
   * one batch run one after the other whichever processes run them.
   */
  async lockForGeneration(db: Executor, id: string): Promise<(BatchRow & BatchLease) | undefined> {
    const row = await db
      .selectFrom('batches')
      .select([...COLUMNS, 'lease_owner', 'lease_until'])
      .where('id', '=', id)
      .$if(this.dialect === 'postgres', (qb) => qb.forUpdate())
      .executeTakeFirst();
    if (!row) return undefined;
    const { lease_owner, lease_until, ...batch } = row;
    return { ...fromStored(batch), lease_owner, lease_until };
  }

  async insert(db: Executor, batch: BatchRow): Promise<void> {
    const { base_payload, serials_provisional, ...rest } = batch;
    await db
      .insertInto('batches')
      .values({ ...rest, serials_provisional: serials_provisional ? 1 : 0, base_payload_json: base_payload === null ? null : JSON.stringify(base_payload) })
      .execute();
  }

  /** Saves label, status, progress and the lease (null lease: anyone may generate it next). */
  async update(db: Executor, batch: BatchRow, lease?: BatchLease): Promise<void> {
    await db
      .updateTable('batches')
      .set({
        label: batch.label,
        status: batch.status,
        failure_reason: batch.failure_reason,
        nodes_generated: batch.nodes_generated,
        updated_at: batch.updated_at,
        ...(lease ?? {}),
      })
      .where('id', '=', batch.id)
      .execute();
  }

  /**
   * Reserves `quantity` serial numbers for a prefix; returns the first. One atomic upsert, so
   * batches created at once in several processes never share a serial.
   */
  async reserveSerials(db: Executor, orgId: string, prefix: string, quantity: number): Promise<number> {
    const row = await db
      .insertInto('serial_counters')
      .values({ org_id: orgId, prefix, next_number: 1 + quantity })
      .onConflict((oc) => oc.columns(['org_id', 'prefix']).doUpdateSet((eb) => ({ next_number: eb('serial_counters.next_number', '+', quantity) })))
      .returning('next_number')
      .executeTakeFirstOrThrow();
    return row.next_number - quantity;
  }

  /** Numbering of `prefix` continues at `next` at least (serials seen from elsewhere, or granted by the remote). */
  async raiseSerials(db: Executor, orgId: string, prefix: string, next: number): Promise<void> {
    const greater = this.dialect === 'postgres' ? sql<number>`GREATEST(serial_counters.next_number, excluded.next_number)` : sql<number>`MAX(serial_counters.next_number, excluded.next_number)`;
    await db
      .insertInto('serial_counters')
      .values({ org_id: orgId, prefix, next_number: next })
      .onConflict((oc) => oc.columns(['org_id', 'prefix']).doUpdateSet({ next_number: greater }))
      .execute();
  }

  /**
   * Claims the oldest generating batch that no live lease holds (or that `owner` holds already)
   * for `owner` until `until`. On PostgreSQL a batch another process is claiming right now is
   * skipped, not waited for. `othersLeases: false` (SQLite: one process per file) treats every
   * lease but the owner's as stale, so a restarted process resumes at once.
   */
  async claimNext(db: Executor, owner: string, now: string, until: string, othersLeases: boolean): Promise<string | undefined> {
    const postgres = this.dialect === 'postgres';
    const row = await db
      .selectFrom('batches')
      .select('id')
      .where('status', '=', 'generating')
      .$if(othersLeases, (qb) =>
        qb.where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', owner), eb('lease_until', 'is', null), eb('lease_until', '<', now)])),
      )
      .orderBy('created_at')
      .orderBy('rowid')
      .limit(1)
      .$if(postgres, (qb) => qb.forUpdate().skipLocked())
      .executeTakeFirst();
    if (!row) return undefined;
    await db.updateTable('batches').set({ lease_owner: owner, lease_until: until }).where('id', '=', row.id).execute();
    return row.id;
  }

  /** When the first lease of another process on a generating batch runs out (null: none held). */
  async nextLeaseExpiry(db: Executor, owner: string): Promise<string | null> {
    const row = await db
      .selectFrom('batches')
      .select((eb) => eb.fn.min('lease_until').as('until'))
      .where('status', '=', 'generating')
      .where('lease_owner', 'is not', null)
      .where('lease_owner', '!=', owner)
      .executeTakeFirst();
    return row?.until ?? null;
  }

  async list(db: Executor, orgId: string, status: BatchStatus | undefined, limit: number, offset: number): Promise<{ rows: BatchRow[]; total: number }> {
    const rows = await db
      .selectFrom('batches')
      .select(COLUMNS)
      .where('org_id', '=', orgId)
      .$if(status !== undefined, (qb) => qb.where('status', '=', status!))
      .orderBy('created_at', 'desc')
      .orderBy('rowid', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const count = await db
      .selectFrom('batches')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .$if(status !== undefined, (qb) => qb.where('status', '=', status!))
      .executeTakeFirstOrThrow();
    return { rows: rows.map(fromStored), total: Number(count.n) };
  }
}
