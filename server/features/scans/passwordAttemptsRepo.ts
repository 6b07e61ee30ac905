/**
 * The SQL of password attempt counting (passwordAttempts.ts), the same on both backends: one
 * upsert per attempt, atomic per row (PostgreSQL locks the row for ON CONFLICT DO UPDATE; SQLite
 * has one writer), so processes answering at the same instant count every attempt once.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/store.ts';

export class PasswordAttemptsRepo {
  /**
   * Counts an attempt on `key` at `now` in a window of `windowMs` (a window that is over starts
   * afresh). The count stops one past `max`, so it tells an allowed attempt (<= max) from a
   * refused one. Answers the window's start and its count after this attempt.
   */
  async count(db: Executor, key: string, now: number, windowMs: number, max: number): Promise<{ from: number; attempts: number }> {
    const over = sql<boolean>`${now} - password_attempts.window_from >= ${windowMs}`;
    const row = await db
      .insertInto('password_attempts')
      .values({ key, window_from: now, attempts: 1 })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          window_from: sql<number>`CASE WHEN ${over} THEN ${now} ELSE password_attempts.window_from END`,
          attempts: sql<number>`CASE WHEN ${over} THEN 1 WHEN password_attempts.attempts > ${max} THEN password_attempts.attempts ELSE password_attempts.attempts + 1 END`,
        }),
      )
      .returning(['window_from', 'attempts'])
      .executeTakeFirstOrThrow();
    return { from: Number(row.window_from), attempts: Number(row.attempts) };
  }

  async clear(db: Executor, key: string): Promise<void> {
    await db.deleteFrom('password_attempts').where('key', '=', key).execute();
  }

  /** Deletes the rows of windows that opened before `before` (clock ms): they are over. */
  async deleteOlderThan(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('password_attempts').where('window_from', '<', before).execute();
  }
}
