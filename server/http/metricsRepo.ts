import type { Executor } from '../db/store.ts';

/** The instance-wide counts behind the /metrics gauges (metrics.ts), read when scraped. */
export class MetricsRepo {
  async nodes(db: Executor): Promise<number> {
    const row = await db.selectFrom('nodes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async batchesByStatus(db: Executor): Promise<Array<{ status: string; n: number }>> {
    const rows = await db
      .selectFrom('batches')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
  }

  /** Events ever recorded: the outbox's highest sequence number. */
  async outboxEvents(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('outbox_events')
      .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
