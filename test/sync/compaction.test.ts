import { describe, expect, it } from 'vitest';
import { freePort } from '../support/receiver.ts';
import { apiRequest, testBackend } from '../support/server.ts';
import { dir, firstKey, kill, paired, readDb, type Remote, type Site, spawn, statusOf, stop, waitFor } from './support.ts';

/*
 * Compaction of the change outbox and pruning of the event outbox in real server processes
 * (docs/sync.md "Compaction", docs/deploy.md "What the database keeps"): every instance runs with
 * no retention and a pass every 300 ms, so superseded changes go as soon as they exist. A site
 * offline while the remote compacts what it had not pulled, and a site that compacts its own
 * unpushed edits while the remote is down, both converge with the remote.
 */

const PRUNE_NOW = ['--sync-retention-days', '0', '--event-retention-days', '0', '--prune-every-ms', '300'];

const node = (label: string) => ({ label, function_type: 'redirect', payload: { url: `https://example.com/${label}` } });

async function ok(res: Promise<{ status: number; text: string; body: any }>, status = 200) { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.body.data;
}

async function startRemote(dataDir = dir(), port?: number): Promise<Remote> {
  const p = port ?? (await freePort());
  const proc = await spawn(dataDir, ['--port', String(p), ...PRUNE_NOW], {}, testBackend);
  return { dataDir, backend: testBackend, port: p, url: `http://127.0.0.1:${p}`, key: port === undefined ? await firstKey(proc) : '', proc };
}

async function startSite(remote: Remote, dataDir = dir(), key?: string): Promise<Site> {
  const proc = await spawn(dataDir, PRUNE_NOW, { WAYMARK_REMOTE: remote.url, WAYMARK_REMOTE_KEY: remote.key });
  const siteKey = key ?? (await firstKey(proc));
  return { dataDir, proc, key: siteKey, api: (method, path, body) => apiRequest(proc.url, method, path, body, siteKey) };
}

/** Rounds until the site has pushed everything and the round went through. */
async function synced(site: Site) {
  return waitFor('a clean sync round with nothing pending', async () => {
    const s = await ok(site.api('POST', '/sync/run'));
    return s.last_error === null && s.pending_changes === 0 ? s : undefined;
  });
}

/** The outbox rows of one node's label writes (upserts carrying `label`), oldest first. */
async function labelRows(dataDir: string, nodeId: string): Promise<string[]> {
  return readDb(dataDir, async (db) => {
    const rows = await db.all<{ op: string; fields: string }>("SELECT op, fields FROM sync_outbox WHERE entity = 'node' AND entity_id = ? AND seq > 0 ORDER BY seq", nodeId);
    return rows.filter((r) => r.op === 'upsert' && 'label' in JSON.parse(r.fields)).map((r) => String(JSON.parse(r.fields).label));
  });
}

async function nodesOf(dataDir: string) {
  return readDb(dataDir, (db) => db.all('SELECT id, slug, label, status, payload_json, updated_at FROM nodes ORDER BY id'));
}

describe(`compaction between real processes (remote on ${testBackend})`, () => {
  it('a site offline past compaction, on either side, converges with the remote', { timeout: 180_000 }, async () => {
    const remote = await startRemote();
    const remoteApi = (method: string, path: string, body?: unknown) => apiRequest(remote.url, method, path, body, remote.key);
    let site = await startSite(remote);
    await paired(site);

    const n1 = await ok(remoteApi('POST', '/nodes', node('one')), 201);
    const n2 = await ok(remoteApi('POST', '/nodes', node('two')), 201);
    await synced(site);
    expect((await nodesOf(site.dataDir)).map((n) => n.label)).toEqual(expect.arrayContaining(['one', 'two']));

    // 1. The site is offline; the remote edits one node three times and deletes the other. Its
    //    compaction drops the edits the site has not pulled, all but the last.
    await stop(site.proc);
    for (const label of ['one-a', 'one-b', 'one-c']) await ok(remoteApi('PATCH', `/nodes/${n1.slug}`, { label }));
    await ok(remoteApi('DELETE', `/nodes/${n2.slug}`));
    await waitFor('the remote compacting the superseded label writes', async () => {
      const labels = await labelRows(remote.dataDir, n1.id);
      return labels.join() === 'one,one-c' || labels.join() === 'one-c' ? labels : undefined;
    });
    site = await startSite(remote, site.dataDir, site.key);
    await synced(site);
    expect(await nodesOf(site.dataDir)).toEqual(await nodesOf(remote.dataDir));
    expect((await nodesOf(site.dataDir)).map((n) => n.label)).toEqual(['one-c']);

    // 2. The remote is down; the site edits the node three times and creates another, edited
    //    twice. Its own compaction drops its superseded, never pushed edits; it pushes the rest.
    await kill(remote.proc);
    for (const label of ['site-a', 'site-b', 'site-c']) await ok(site.api('PATCH', `/nodes/${n1.slug}`, { label }));
    const n3 = await ok(site.api('POST', '/nodes', node('three')), 201);
    await ok(site.api('PATCH', `/nodes/${n3.slug}`, { label: 'three-a' }));
    await ok(site.api('PATCH', `/nodes/${n3.slug}`, { label: 'three-b', status: 'paused' }));
    await waitFor('the site compacting its unpushed label writes', async () => {
      const labels = await labelRows(site.dataDir, n1.id);
      return !labels.includes('site-a') && !labels.includes('site-b') && labels.includes('site-c') ? labels : undefined;
    });
    expect((await statusOf(site)).pending_changes).toBeGreaterThan(0);
    remote.proc = (await startRemote(remote.dataDir, remote.port)).proc;
    await synced(site);
    await synced(site); // and pull what the push produced
    expect(await nodesOf(remote.dataDir)).toEqual(await nodesOf(site.dataDir));
    expect((await nodesOf(remote.dataDir)).map((n) => [n.label, n.status])).toEqual(
      expect.arrayContaining([
        ['site-c', 'active'],
        ['three-b', 'paused'],
      ]),
    );

    // The event outboxes were pruned too: no endpoint, so every event but the newest goes, at
    // the remote (which delivers) and at the site (whose events the remote delivers).
    for (const d of [remote.dataDir, site.dataDir]) {
      await waitFor(`the event outbox of ${d} pruned down to its newest event`, async () => {
        const n = await readDb(d, (db) => db.value<number>('SELECT COUNT(*) FROM outbox_events'));
        return n === 1 ? n : undefined;
      });
    }
  });
});
