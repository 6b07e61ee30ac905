/**
 * scan_count: the nodes feature is the one writer of `nodes`, so the scan path's per-batch count
 * update lives here, in the two forms its two writers need (scans/writer.ts on SQLite, synchronous
 * on its own connection; scans/postgresWriter.ts, async in the batch's transaction).
 * scan_count is no synced field and moves no scan-cache epoch (the triggers watch other columns).
 */
import type { Database } from 'better-sqlite3';
import { sql } from 'kysely';
import type { Executor } from '../../db/store.ts';

/** SQLite, the scan path's own connection: adds `n` to a node's scan_count (prepared once). */
export function prepareScanCount(db: Database): (nodeId: string, n: number) => void {
  const add = db.prepare('UPDATE nodes SET scan_count = scan_count + ? WHERE id = ?');
  return (nodeId, n) => {
    add.run(n, nodeId);
  };
}

/**
 * PostgreSQL, first statement of a batch of scans: locks the batch's nodes in id order (two
 * processes' batches touching the same nodes then wait for each other instead of deadlocking)
 * and returns those that still exist, each with its scan_count as stored (what max_scans is held
 * against across processes: scans/storage.ts Recount). A node deleted before this gets no scan; one deleted after
 * it waits for the batch to commit, and its delete trigger then removes the batch's scans.
 */
export async function lockNodesForScans(tx: Executor, nodeIds: readonly string[]): Promise<Map<string, number>> {
  if (nodeIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom('nodes')
    .select(['id', 'scan_count'])
    .where('id', 'in', [...nodeIds])
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
  return new Map(rows.map((r) => [r.id, Number(r.scan_count)]));
}

/** PostgreSQL: adds each node's new scans to its scan_count, one statement per batch (rows locked above). */
export async function addScanCounts(tx: Executor, counts: ReadonlyMap<string, number>): Promise<void> {
  if (counts.size === 0) return;
  const ids = [...counts.keys()];
  const ns = ids.map((id) => counts.get(id) as number);
  await sql`UPDATE nodes SET scan_count = nodes.scan_count + c.n
            FROM unnest(${ids}::text[], ${ns}::bigint[]) AS c(id, n) WHERE nodes.id = c.id`.execute(tx);
}

/**
 * Either backend, in the caller's transaction (sync's push apply, scans arriving from a site): adds
 * each node's new scans to its scan_count, in node-id order as lockNodesForScans locks them, so on
 * PostgreSQL a push and a scan batch touching the same nodes wait for each other, never deadlock.
 */
export async function addScanCountsInTx(tx: Executor, counts: ReadonlyMap<string, number>): Promise<void> {
  for (const id of [...counts.keys()].sort()) {
    const n = counts.get(id) as number;
    await tx
      .updateTable('nodes')
      .set((eb) => ({ scan_count: eb('scan_count', '+', n) }))
      .where('id', '=', id)
      .execute();
    // scan_count moves no scan-cache epoch, but a node with max_scans counts on it: naming the
    // column fires the cache triggers (UPDATE OF) without changing anything, so the scan path here
    // reads the count with the pushed scans in it. The sync capture sees no change and records none.
    await tx
      .updateTable('nodes')
      .set((eb) => ({ max_scans: eb.ref('max_scans') }))
      .where('id', '=', id)
      .where('max_scans', 'is not', null)
      .execute();
  }
}
