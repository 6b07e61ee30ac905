import type { Executor } from '../db/store.ts';

export interface OutboxRow {
  id: string;
  org_id: string;
  type: string;
  data_json: string;
  created_at: string;
}

/** The SQL of the event outbox (platform/outbox.ts). */
export class OutboxRepo {
  async insert(db: Executor, row: OutboxRow): Promise<void> {
    await db.insertInto('outbox_events').values(row).execute();
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
}
