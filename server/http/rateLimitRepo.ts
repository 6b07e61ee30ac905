import type { Executor } from '../db/store.ts';

/** A key's counts in one minute window. */
export interface WindowCounts {
  standard: number;
  batch: number;
  second: number;
  burst: number;
}

/**
 * Rate-limit windows in the database (table rate_limit_windows), for processes that share the
 * budgets. Each charge is one conditional upsert: the row is incremented only if every budget
 * the request belongs to has room, so a rejected request changes nothing, and concurrent
 * requests for one key serialize on the row whichever process sends them.
 */
export class RateLimitRepo {
  /** Charges a standard request; undefined when the minute budget or the second's burst is spent. */
  async chargeStandard(
    db: Executor,
    keyId: string,
    at: { minute: number; second: number },
    limits: { perMinute: number; perSecond: number },
  ): Promise<{ standard: number } | undefined> {
    return db
      .insertInto('rate_limit_windows')
      .values({ key_id: keyId, minute: at.minute, standard: 1, batch: 0, second: at.second, burst: 1 })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'minute'])
          // Every expression here reads the row as it was before this update.
          .doUpdateSet((eb) => ({
            standard: eb('rate_limit_windows.standard', '+', 1),
            burst: eb.case().when('rate_limit_windows.second', '=', at.second).then(eb('rate_limit_windows.burst', '+', 1)).else(1).end(),
            second: at.second,
          }))
          .where((eb) =>
            eb.and([
              eb('rate_limit_windows.standard', '<', limits.perMinute),
              eb.or([eb('rate_limit_windows.second', '<>', at.second), eb('rate_limit_windows.burst', '<', limits.perSecond)]),
            ]),
          ),
      )
      .returning('standard')
      .executeTakeFirst();
  }

  /** Charges a batch request; undefined when the minute's batch budget is spent. */
  async chargeBatch(db: Executor, keyId: string, minute: number, perMinute: number): Promise<{ batch: number } | undefined> {
    return db
      .insertInto('rate_limit_windows')
      .values({ key_id: keyId, minute, standard: 0, batch: 1, second: 0, burst: 0 })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'minute'])
          .doUpdateSet((eb) => ({ batch: eb('rate_limit_windows.batch', '+', 1) }))
          .where('rate_limit_windows.batch', '<', perMinute),
      )
      .returning('batch')
      .executeTakeFirst();
  }

  async counts(db: Executor, keyId: string, minute: number): Promise<WindowCounts | undefined> {
    return db
      .selectFrom('rate_limit_windows')
      .select(['standard', 'batch', 'second', 'burst'])
      .where('key_id', '=', keyId)
      .where('minute', '=', minute)
      .executeTakeFirst();
  }

  /** Deletes the windows of minutes before `minute`. */
  async deleteBefore(db: Executor, minute: number): Promise<void> {
    await db.deleteFrom('rate_limit_windows').where('minute', '<', minute).execute();
  }
}
