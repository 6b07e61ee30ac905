/**
 * Seeding for scan tests on either backend (openTestStore), through the store: organizations,
 * nodes with their slugs, rules, `node.scanned` subscribers, and the scan writer of the dialect
 * (SQLite's hand-written one on its connection, PostgreSQL's group commit).
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../server/db/store.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';
import { PostgresScanRepo } from '../../server/features/scans/postgresRepo.ts';
import { PostgresScanWriter } from '../../server/features/scans/postgresWriter.ts';
import { ScanWriter, type ScanRecord, type WriteResult } from '../../server/features/scans/writer.ts';
import { subscriptionCheck } from '../../server/features/webhooks/index.ts';

export const SEED_AT = '2026-11-21T12:00:00.000Z';

export async function seedOrg(store: Store, id: string = randomUUID()): Promise<string> {
  await store.db.insertInto('organizations').values({ id, name: `Org ${id}`, created_at: SEED_AT }).execute();
  return id;
}

export interface SeedNode {
  id?: string;
  slug: string;
  function_type?: string;
  payload?: unknown;
  status?: string;
}

export async function seedNode(store: Store, orgId: string, node: SeedNode): Promise<string> {
  const id = node.id ?? randomUUID();
  await store.transaction(async (tx) => {
    await tx.insertInto('slugs').values({ slug: node.slug, org_id: orgId, node_id: id, minted_at: SEED_AT }).execute();
    await tx
      .insertInto('nodes')
      .values({
        id,
        org_id: orgId,
        slug: node.slug,
        label: node.slug,
        function_type: node.function_type ?? 'redirect',
        payload_json: JSON.stringify(node.payload ?? { url: `https://example.com/${node.slug}` }),
        status: node.status ?? 'active',
        created_at: SEED_AT,
        updated_at: SEED_AT,
      })
      .execute();
  });
  return id;
}

/** An inactive endpoint subscribed to node.scanned (the writers record the events only then). */
export async function subscribeToScansOn(store: Store, orgId: string): Promise<string> {
  const id = randomUUID();
  const max = await store.db.selectFrom('outbox_events').select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('m')).executeTakeFirstOrThrow();
  await store.db
    .insertInto('webhooks')
    .values({
      id,
      org_id: orgId,
      url: 'https://hooks.example.com/scans',
      events_json: '["node.scanned"]',
      description: 'scan events (test)',
      active: 0,
      secret: `whsec_${randomUUID().replaceAll('-', '')}`,
      start_seq: Number(max.m),
      created_at: SEED_AT,
      updated_at: SEED_AT,
    })
    .execute();
  return id;
}

/** The scan writer of the store's dialect, as a promise either way. */
export function scanWriterFor(store: Store): (scans: ScanRecord[]) => Promise<WriteResult> {
  if (store instanceof SqliteStore) {
    const writer = new ScanWriter(store.connection);
    return async (scans) => writer.write(scans);
  }
  const writer = new PostgresScanWriter(store, new PostgresScanRepo(), subscriptionCheck('postgres'));
  return (scans) => writer.write(scans);
}

let k = 0;
/** A human scan of `nodeId` (override anything). */
export function scanOf(nodeId: string, orgId: string, over: Partial<ScanRecord> = {}): ScanRecord {
  k++;
  return {
    node_id: nodeId, org_id: orgId, slug: 'AAAAAAAA', ts: Date.parse(SEED_AT) + k * 1000, device_type: 'mobile', os: 'ios', browser: 'Mobile Safari',
    country: 'FR', source: 'qr', rule_id: null, outcome: 'redirect', is_bot: 0, visitor_hash: `v${k}`, ...over,
  };
}
