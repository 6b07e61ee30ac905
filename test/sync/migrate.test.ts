import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiRequest, databaseFor, repoRoot } from '../support/server.ts';
import { needs } from '../support/system.ts';
import {
  node,
  ok,
  paired,
  readDb,
  type Remote,
  restartRemote,
  scan,
  scanCount,
  scansOf,
  type Site,
  snapshot,
  startBusyRemote,
  startSite,
  statusOf,
  stop,
  syncAll,
  waitFor,
} from './support.ts';

/*
 * `waymark migrate --from-data DIR --database URL` on a populated remote with paired sites (issue
 * 19, item 5), all real processes: a SQLite remote and two SQLite sites sync (nodes on every side,
 * a tombstoned slug, scans, leases, a conflict); the remote stops, moves to PostgreSQL and starts
 * again on the same port; the sites carry on without pairing again. test/api/migrate.test.ts
 * checks the copy row for row on a standalone instance.
 */

const postgresMissing = needs.postgres();

const remoteApi = (remote: Remote, method: string, path: string, body?: unknown) => apiRequest(remote.proc.url, method, path, body, remote.key);

/** What the remote's sync service holds, through its API and its rows. */
async function syncState(remote: Remote, site: { site_id: string; incarnation: string }, cursor: string | undefined) {
  const feed = (query: string) => ok(remoteApi(remote, 'GET', `/sync/changes?site_id=${site.site_id}&incarnation=${site.incarnation}&limit=1000${query}`));
  // When a site last called changes with every background round (every 30 s); the rest may not.
  const sites = (await ok(remoteApi(remote, 'GET', '/sync/sites'))) as Array<{ last_seen_at?: string; incarnations: Array<{ last_seen_at?: string }> }>;
  return {
    sites: sites.map(({ last_seen_at: _, incarnations, ...s }) => ({ ...s, incarnations: incarnations.map(({ last_seen_at: __, ...i }) => i) })),
    conflicts: await ok(remoteApi(remote, 'GET', '/sync/conflicts')),
    // The whole feed as a site reads it (seqs and HLCs inside the cursor), and what is left after
    // the site's own cursor.
    feed: await feed(''),
    afterCursor: await feed(cursor ? `&cursor=${cursor}` : ''),
    rows: await readDb(remote.dataDir, async (db) => ({
      leases: await db.all('SELECT block, org_id, site_id, incarnation, kind, grant_token FROM sync_leases ORDER BY block'),
      tokens: await db.all('SELECT site_id, incarnation, token FROM sync_incarnations ORDER BY site_id, incarnation'),
      pushed: await db.all('SELECT site_id, incarnation, last_seq FROM sync_push_state ORDER BY site_id, incarnation'),
      events: await db.all('SELECT id, type, data_json FROM outbox_events ORDER BY seq'),
    })),
    snapshot: await snapshot(remote.dataDir),
    scans: await scansOf(remote.dataDir),
  };
}

const siteCursor = (site: Site) => readDb(site.dataDir, (db) => db.value<string>("SELECT value FROM settings WHERE key = 'sync.cursor'"));

describe.skipIf(postgresMissing !== null)(`sync: a paired SQLite remote moved to PostgreSQL${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`, { timeout: 240_000 }, () => {
  it('its sites carry on without pairing again: nothing lost, nothing replayed, changes flow both ways', async () => {
    const remote = await startBusyRemote('sqlite');
    const a = await startSite(remote.url, remote.key);
    const b = await startSite(remote.url, remote.key);
    await Promise.all([paired(a), paired(b)]);

    // History on the SQLite remote: nodes from every side, scans, a delete, and an edit made at
    // another site after that delete (a conflict in the remote's log, sent down to that site).
    const na = await ok(a.api('POST', '/nodes', node('from-a')), 201);
    const nb = await ok(b.api('POST', '/nodes', node('from-b')), 201);
    const gone = await ok(a.api('POST', '/nodes', node('deleted-at-a')), 201);
    const nr = await ok(remoteApi(remote, 'POST', '/nodes', node('from-remote')), 201);
    await scan(a, na.slug, 2);
    await waitFor('scans recorded', async () => (await scanCount(a, na.slug)) === 2);
    await syncAll(a, b);
    await stop(remote.proc);
    await ok(a.api('DELETE', `/nodes/${gone.slug}`));
    await ok(b.api('PATCH', `/nodes/${gone.slug}`, { label: 'edited-after-delete' }));
    await restartRemote(remote);
    await syncAll(a, b);
    await syncAll(a, b); // the conflict the remote found comes down to b

    const [statusA, statusB] = [await statusOf(a), await statusOf(b)];
    const before = await syncState(remote, statusA, await siteCursor(a));
    expect(before.snapshot.tombstoned).toContain(gone.slug);
    expect(before.conflicts.map((c: { kind: string }) => c.kind)).toEqual(['edit_after_delete']);
    expect(before.rows.leases.filter((l) => l.site_id === statusA.site_id)).toHaveLength(2);
    expect(before.rows.pushed).toHaveLength(2);
    expect(before.scans).toMatchObject({ total: 2, distinct: 2 });
    expect(before.afterCursor.changes).toEqual([]);

    // The move: stop, migrate, serve on PostgreSQL on the same port (same data directory for
    // its secrets, same keys).
    await stop(remote.proc);
    const database = (await databaseFor(remote.dataDir, 'postgres'))!;
    const report = JSON.parse(
      execFileSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'migrate', '--from-data', remote.dataDir, '--database', database, '--json']).toString(),
    ) as { rows: number };
    expect(report.rows).toBeGreaterThan(0);
    remote.backend = 'postgres';
    // Its fencing tokens are as the sites last left them (read before any site calls).
    expect(await readDb(remote.dataDir, (db) => db.all('SELECT site_id, incarnation, token FROM sync_incarnations ORDER BY site_id, incarnation'))).toEqual(before.rows.tokens);
    await restartRemote(remote);
    await waitFor('the remote to name its database', async () => remote.proc.output().includes(`Data: ${database}`));

    // Everything the sites rely on is there: the same feed (a site's cursor points at the same
    // place, nothing is sent down again), the same sites, leases, push positions, conflicts.
    const after = await syncState(remote, statusA, await siteCursor(a));
    expect({ ...after, rows: { ...after.rows, tokens: undefined } }).toEqual({ ...before, rows: { ...before.rows, tokens: undefined } });

    // The sites carry on: same incarnations (no pairing again, tokens accepted), nothing pending,
    // nothing pushed twice (no scan, event or conflict recorded again).
    await syncAll(a, b);
    for (const [site, was] of [[a, statusA], [b, statusB]] as const) {
      const now = await statusOf(site);
      expect(now).toMatchObject({ paired: true, online: true, last_error: null, site_id: was.site_id, incarnation: was.incarnation, pending_changes: 0 });
      expect(now.conflicts).toEqual(was.conflicts);
    }
    const settled = await syncState(remote, statusA, await siteCursor(a));
    expect(settled.conflicts).toEqual(before.conflicts);
    expect(settled.scans).toEqual(before.scans);
    expect(settled.rows.events).toEqual(before.rows.events);
    expect(settled.rows.leases).toEqual(before.rows.leases);

    // Changes flow both ways: at a site (an edit, a node from its lease, scans), at the remote.
    await ok(a.api('PATCH', `/nodes/${nb.slug}`, { label: 'b-edited-at-a' }));
    const moved = await ok(a.api('POST', '/nodes', node('after-the-move')), 201);
    await ok(remoteApi(remote, 'PATCH', `/nodes/${nr.slug}`, { status: 'paused' }));
    await syncAll(a, b);
    await scan(b, moved.slug, 3);
    await waitFor('scans recorded', async () => (await scanCount(b, moved.slug)) === 3);
    await syncAll(a, b);
    const r = await snapshot(remote.dataDir);
    expect(await snapshot(a.dataDir)).toEqual(r);
    expect(await snapshot(b.dataDir)).toEqual(r);
    expect(r.nodes.map((n: any) => n.label).sort()).toEqual(['after-the-move', 'b-edited-at-a', 'from-a', 'from-remote']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((r.nodes.find((n: any) => n.slug === nr.slug) as any).status).toBe('paused'); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r.tombstoned).toEqual(before.snapshot.tombstoned);
    expect(await scansOf(remote.dataDir)).toMatchObject({ total: 5, distinct: 5 });
    // The new node's slug comes from a's lease, which the remote still has on record for it.
    const verified = await ok(remoteApi(remote, 'POST', '/sync/slugs/verify', { site_id: statusA.site_id, slugs: [moved.slug] }));
    expect(verified).toEqual({ accepted: [moved.slug], rejected: [] });
    // Webhook events: one node.created per node, whichever side made it and when.
    const created = await readDb(remote.dataDir, (db) => db.pluck<string>("SELECT data_json FROM outbox_events WHERE type = 'node.created'"));
    expect(created.map((d) => JSON.parse(d).label as string).sort()).toEqual(['after-the-move', 'deleted-at-a', 'from-a', 'from-b', 'from-remote']);
    expect((await ok(remoteApi(remote, 'GET', '/sync/conflicts'))).map((c: { id: number }) => c.id)).toEqual(before.conflicts.map((c: { id: number }) => c.id));
  });
});
