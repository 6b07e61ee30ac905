/**
 * Whether an organization has an endpoint subscribed to an event type (platform/outbox.ts,
 * SubscriptionCheck): the webhooks feature owns the endpoints table, so the question is asked
 * here. json_each on SQLite, jsonb containment on PostgreSQL.
 */
import type { Database } from 'better-sqlite3';
import { sql } from 'kysely';
import type { Dialect } from '../../db/store.ts';
import type { SubscriptionCheck } from '../../platform/outbox.ts';

export function subscriptionCheck(dialect: Dialect): SubscriptionCheck {
  return async (db, orgId, type) => {
    const query =
      dialect === 'postgres'
        ? sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM webhooks w WHERE w.org_id = ${orgId} AND w.events_json::jsonb @> jsonb_build_array(${type}::text)) AS found`
        : sql<{ found: number }>`SELECT EXISTS (SELECT 1 FROM webhooks w, json_each(w.events_json) e WHERE w.org_id = ${orgId} AND e.value = ${type}) AS found`;
    const { rows } = await query.execute(db);
    return Boolean(rows[0]?.found);
  };
}

/** The same check, synchronous on a SQLite connection of its own (the scan path's writer). */
export function sqliteSubscriptionCheck(db: Database): (orgId: string, type: string) => boolean {
  const exists = db
    .prepare('SELECT EXISTS (SELECT 1 FROM webhooks w, json_each(w.events_json) e WHERE w.org_id = ? AND e.value = ?)')
    .pluck();
  return (orgId, type) => exists.get(orgId, type) === 1;
}
