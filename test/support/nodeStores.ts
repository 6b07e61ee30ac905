/**
 * The node features (server/nodeServices.ts) on a bare store of either backend, for tests that
 * prove their repositories and transactions on SQLite and PostgreSQL alike.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../server/db/store.ts';
import { subscriptionCheck } from '../../server/features/webhooks/index.ts';
import { createNodeServices, type NodeServicesDeps } from '../../server/nodeServices.ts';
import type { Clock } from '../../server/platform/clock.ts';
import { Outbox } from '../../server/platform/outbox.ts';
import { openTestStore, type TestStore } from './stores.ts';
import { needs } from './system.ts';

export const SCAN_BASE = 'https://wm.example';

/** Both backends; PostgreSQL skips with the reason when no server is configured. */
export const backends = [
  { dialect: 'sqlite' as const, skip: null },
  { dialect: 'postgres' as const, skip: needs.postgres() },
];

export function nodeServices(store: Store, clock: Clock, extra: Partial<NodeServicesDeps> = {}) {
  const outbox = new Outbox({ store, clock, subscribed: subscriptionCheck(store.dialect) });
  return { outbox, ...createNodeServices({ store, clock, outbox, scanBase: SCAN_BASE, apiBase: `${SCAN_BASE}/v1`, ...extra }) };
}

/** An organization row; returns its id. */
export async function insertOrg(store: Store, name = 'Org'): Promise<string> {
  const id = randomUUID();
  await store.db.insertInto('organizations').values({ id, name, created_at: new Date(0).toISOString() }).execute();
  return id;
}

export type { TestStore };
export { openTestStore };
