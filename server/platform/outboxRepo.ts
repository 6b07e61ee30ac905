import type { Executor } from '../db/store.ts';

export interface OutboxRow {
  id: string;
  org_id: string;
  type: string;
  data_json: string;
  created_at: string;
}

/** Rows per multi-row INSERT: 5 parameters each, far below SQLite's and PostgreSQL's limits. */
const INSERT_CHUNK = 500;

/** The SQL of the event outbox (platform/outbox.ts) and of its pruning (platform/outboxPruner.ts). */
export class OutboxRepo {
  async insert(db: Executor, row: OutboxRow): Promise<void> {
    await db.insertInto('outbox_events').values(row).execute();
  }

  /** Rows in order, a few hundred per INSERT (an import records thousands in one transaction). */
  async insertMany(db: Executor, rows: readonly OutboxRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await db.insertInto('outbox_events').values(rows.slice(i, i + INSERT_CHUNK)).execute();
  }

  /** Events after `afterSeq`, oldest first. */
  after(db: Executor, afterSeq: number, limit: number): Promise<Array<OutboxRow & { seq: number }>> {
    return db
      .selectFrom('outbox_events')
      .select(['seq', 'id', 'org_id', 'type', 'data_json', 'created_at'])
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  // ---- pruning (outboxPruner.ts) ----

  /** The highest seq recorded (0 when none is left). */
  async maxSeq(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('outbox_events')
      .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Seqs of events with `after` < seq < `below` recorded before `before` (ISO), oldest first. */
  async prunable(db: Executor, range: { after: number; below: number; before: string; limit: number }): Promise<number[]> {
    const rows = await db
      .selectFrom('outbox_events')
      .select('seq')
      .where('seq', '>', range.after)
      .where('seq', '<', range.below)
      .where('created_at', '<', range.before)
      .orderBy('seq')
      .limit(range.limit)
      .execute();
    return rows.map((r) => Number(r.seq));
  }

  async deleteEvents(db: Executor, seqs: readonly number[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < seqs.length; i += 500) {
      const r = await db.deleteFrom('outbox_events').where('seq', 'in', seqs.slice(i, i + 500)).executeTakeFirst();
      deleted += Number(r.numDeletedRows);
    }
    return deleted;
  }
}
