import { cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BLOCK_SIZE } from '../../server/features/slugs/allocator.ts';
import { startFaultProxy } from '../support/faultProxy.ts';
import { apiRequest } from '../support/server.ts';
import {
  createOrg,
  dir,
  firstKey,
  kill,
  node,
  paired,
  politely,
  proxies,
  readDb,
  type Remote,
  restartRemote,
  restartSite,
  type Site,
  spawn,
  startRemote,
  startSite,
  statusOf,
  stop,
  waitFor,
} from './support.ts';

/*
 * Pairing and slug leases between real server processes on loopback: one remote, several sites
 * (the real CLI, `serve --remote --remote-key`), restarted, stopped and SIGKILLed.
 */

const leaseBlocksOf = (dataDir: string) =>
  readDb(dataDir, (db) => db.pluck<number>("SELECT block FROM slug_blocks WHERE source = 'lease' ORDER BY block"));

const remoteLeases = (remote: Remote, siteId: string, incarnation?: string) =>
  readDb(remote.dataDir, (db) =>
    incarnation
      ? (db.pluck<number>('SELECT block FROM sync_leases WHERE site_id = ? AND incarnation = ? ORDER BY block', siteId, incarnation))
      : (db.pluck<number>('SELECT block FROM sync_leases WHERE site_id = ? ORDER BY block', siteId)),
  );

async function makeBatches(site: Site, count: number, quantity: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await site.api('POST', '/batches', { label: `B${i}`, prefix: `B${i}`, quantity, function_type: 'redirect' });
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.data.id);
  }
  // Polled gently: the site key's standard budget is 100 requests a minute.
  let polls = 0;
  await waitFor('the batches to be generated', async () => {
    polls += 1;
    const res = await site.api('GET', '/batches?status=generating');
    expect(res.status, res.text).toBe(200);
    return res.body.total === 0;
  }, 60_000, 1_000);
  const slugs: string[] = [];
  for (const id of ids) {
    const manifest = await site.api('GET', `/batches/${id}/manifest`);
    expect(manifest.status, `${manifest.text} after ${polls} polls`).toBe(200);
    slugs.push(...manifest.body.data.nodes.map((n: { slug: string }) => n.slug));
  }
  return slugs;
}

describe('sync: pairing and slug leases between processes', { timeout: 240_000 }, () => {
  it('pairs a site with the remote for the key\'s organization and leases it a reserve', async () => {
    const remote = await startRemote();
    const site = await startSite(remote.url, remote.key);
    const status = await paired(site);
    expect(status).toMatchObject({
      mode: 'site',
      remote: remote.url,
      paired: true,
      online: true,
      last_error: null,
      reserve: { slugs_left: 2 * BLOCK_SIZE, blocks: 2, target_blocks: 2 },
      pending_changes: 0,
      conflicts: [],
    });
    expect(status.site_id).toMatch(/^[0-9a-f-]{36}$/);
    const remoteStatus = await apiRequest(remote.proc.url, 'GET', '/sync/status', undefined, remote.key);
    expect(remoteStatus.body.data).toMatchObject({ mode: 'standalone', paired: false });
    expect(status.remote_org.id).not.toBe(undefined);

    const sites = await apiRequest(remote.url, 'GET', '/sync/sites', undefined, remote.key);
    expect(sites.body.data).toHaveLength(1);
    expect(sites.body.data[0]).toMatchObject({ site_id: status.site_id, incarnations: [{ incarnation: status.incarnation, blocks: 2 }] });
    expect(await leaseBlocksOf(site.dataDir)).toEqual(await remoteLeases(remote, status.site_id, status.incarnation));

    // Another organization on the remote does not see the site, and cannot take it over.
    const otherKey = (await createOrg(remote.dataDir, 'Other')).api_key;
    expect((await apiRequest(remote.url, 'GET', '/sync/sites', undefined, otherKey)).body).toEqual({ data: [], total: 0 });
    const takeover = await apiRequest(
      remote.url,
      'POST',
      '/sync/sites',
      { site_id: status.site_id, incarnation: 'another-incarnation', name: 'x', token: null, next_token: 'tok-other-org', claims: [] },
      otherKey,
    );
    expect(takeover.status).toBe(409);
    expect(takeover.body).toEqual({ data: null, error: 'This site id is registered with another organization' });

    // A bad remote key: the site keeps running, offline-refused, and says why.
    const bad = await startSite(remote.url, 'wmk_' + 'A'.repeat(32));
    const badStatus = await waitFor('the refusal', async () => {
      const s = await statusOf(bad);
      return s.last_error ? s : undefined;
    });
    expect(badStatus).toMatchObject({ paired: false, online: true, reserve: { blocks: 0 } });
    expect(badStatus.last_error).toContain('Invalid or missing API key');
    const refused = await bad.api('POST', '/nodes', node('x'));
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ data: null, error: expect.stringContaining("No slugs left in this site's reserve") });
  });

  it('two offline sites mint thousands of slugs from disjoint leases; the remote accepts each site\'s own slugs only', async () => {
    const remote = await startRemote();
    const a = await startSite(remote.url, remote.key);
    const b = await startSite(remote.url, remote.key);
    const [sa, sb] = [await paired(a), await paired(b)];
    await stop(remote.proc);

    const slugsA: string[] = [];
    const slugsB: string[] = [];
    const [batchA, batchB] = await Promise.all([makeBatches(a, 4, 500), makeBatches(b, 4, 500)]);
    slugsA.push(...batchA);
    slugsB.push(...batchB);
    for (let i = 0; i < 20; i++) {
      const [ra, rb] = await Promise.all([
        politely(() => a.api('POST', '/nodes', node(`a${i}`))),
        politely(() => b.api('POST', '/nodes', node(`b${i}`))),
      ]);
      expect([ra.status, rb.status]).toEqual([201, 201]);
      slugsA.push(ra.body.data.slug);
      slugsB.push(rb.body.data.slug);
    }
    expect(slugsA).toHaveLength(2020);
    expect(slugsB).toHaveLength(2020);
    expect(new Set([...slugsA, ...slugsB]).size).toBe(4040);
    // The creations above spent this minute's write budget, so the run may be asked to wait its turn.
    const run = await politely(() => a.api('POST', '/sync/run'));
    expect(run.status, run.text).toBe(200);
    const offline = run.body.data;
    expect(offline).toMatchObject({ online: false, paired: true });
    expect(offline.last_error).toMatch(/^Remote unreachable/);

    await restartRemote(remote);
    const own = await apiRequest(remote.url, 'POST', '/nodes', node('remote'), remote.key);
    expect(own.status).toBe(201);
    const verify = async (siteId: string, slugs: string[]) => {
      const res = await apiRequest(remote.url, 'POST', '/sync/slugs/verify', { site_id: siteId, slugs }, remote.key);
      expect(res.status, res.text).toBe(200);
      return res.body.data;
    };
    for (let i = 0; i < slugsA.length; i += 500) {
      expect((await verify(sa.site_id, slugsA.slice(i, i + 500))).accepted).toHaveLength(Math.min(500, slugsA.length - i));
    }
    const crossed = await verify(sa.site_id, slugsB.slice(0, 100));
    expect(crossed.accepted).toEqual([]);
    expect(crossed.rejected.every((r: { reason: string }) => r.reason === 'leased_to_other_site')).toBe(true);
    expect((await verify(sb.site_id, [own.body.data.slug, 'ZZZZZZZZ', 'nope'])).rejected).toEqual([
      { slug: own.body.data.slug, reason: 'not_leased' },
      { slug: 'ZZZZZZZZ', reason: 'not_leased' },
      { slug: 'nope', reason: 'malformed' },
    ]);
  });

  it('refuses creation with a clear 409 only when the reserve is empty, and resumes after a top-up', async () => {
    const remote = await startRemote();
    let site = await startSite(remote.url, remote.key);
    await paired(site);
    await stop(site.proc);
    await stop(remote.proc);
    // Fast-forward usage instead of minting 131,072 nodes: leave 3 slugs in each leased block.
    const db = new BetterSqlite3(join(site.dataDir, 'waymark.sqlite'));
    db.prepare(`UPDATE slug_blocks SET next_offset = ${BLOCK_SIZE - 3} WHERE source = 'lease'`).run();
    db.close();

    site = await restartSite(site, remote.url, remote.key);
    expect((await statusOf(site)).reserve).toEqual({ slugs_left: 6, blocks: 2, target_blocks: 2 });
    const tooBig = await site.api('POST', '/batches', { label: 'L', prefix: 'L', quantity: 7, function_type: 'redirect' });
    expect(tooBig.status).toBe(409);
    expect(tooBig.body.error).toMatch(/^This site's slug reserve has 6 slugs left, not enough for 7: it refills from http/);
    const minted: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await site.api('POST', '/nodes', node(`n${i}`));
      expect(res.status).toBe(201);
      minted.push(res.body.data.slug);
    }
    const empty = await site.api('POST', '/nodes', node('one too many'));
    expect(empty.status).toBe(409);
    expect(empty.body).toEqual({ data: null, error: expect.stringMatching(/^No slugs left in this site's reserve/) });
    const status = await statusOf(site);
    expect(status).toMatchObject({ online: false, reserve: { slugs_left: 0, blocks: 0 } });
    expect(status.last_error).toMatch(/unreachable/i);

    await restartRemote(remote);
    const after = await site.api('POST', '/sync/run');
    expect(after.body.data).toMatchObject({ online: true, last_error: null, reserve: { blocks: 2, slugs_left: 2 * BLOCK_SIZE } });
    const resumed = await site.api('POST', '/nodes', node('after top-up'));
    expect(resumed.status).toBe(201);
    expect(minted).not.toContain(resumed.body.data.slug);
  });

  it('a copied data directory and a database restored in place get new incarnations and fresh blocks', async () => {
    const remote = await startRemote();
    let site = await startSite(remote.url, remote.key);
    const before = await paired(site);
    const created = await site.api('POST', '/nodes', node('before copy'));
    expect(created.status).toBe(201);
    await stop(site.proc);
    const originalBlocks = await leaseBlocksOf(site.dataDir);

    // 1. The whole data directory copied elsewhere (a cloned disk, a copied folder).
    const copyDir = dir();
    cpSync(site.dataDir, copyDir, { recursive: true });
    const copy = await startSite(remote.url, remote.key, copyDir, site.key);
    const copied = await paired(copy);
    expect(copied.site_id).toBe(before.site_id);
    expect(copied.incarnation).not.toBe(before.incarnation);
    expect(copy.proc.output()).toContain('the database file is a copy');
    const copyActive = await readDb(copyDir, (db) =>
      db.pluck<number>(`SELECT block FROM slug_blocks WHERE source = 'lease' AND next_offset < ${BLOCK_SIZE}`),
    );
    expect(copyActive).toHaveLength(2);
    for (const b of copyActive) expect(originalBlocks).not.toContain(b);
    const fromCopy = await copy.api('POST', '/nodes', node('on the copy'));
    expect(fromCopy.status).toBe(201);

    // The original keeps its incarnation and its blocks.
    site = await restartSite(site, remote.url, remote.key);
    const again = await paired(site);
    expect(again.incarnation).toBe(before.incarnation);
    expect(await leaseBlocksOf(site.dataDir)).toEqual(originalBlocks);
    const sites = await apiRequest(remote.url, 'GET', '/sync/sites', undefined, remote.key);
    expect(sites.body.data[0].incarnations.map((i: { incarnation: string }) => i.incarnation).sort()).toEqual(
      [before.incarnation, copied.incarnation].sort(),
    );

    // 2. A backup of the database written back over the live file (same inode).
    await stop(site.proc);
    const backup = join(dir(), 'backup.sqlite');
    cpSync(join(site.dataDir, 'waymark.sqlite'), backup);
    site = await restartSite(site, remote.url, remote.key);
    await paired(site);
    await stop(site.proc);
    // Written over the live file (like `cat backup > waymark.sqlite`): the inode stays, only the
    // epoch shows the database is older than its marker.
    const live = join(site.dataDir, 'waymark.sqlite');
    const inode = statSync(live).ino;
    writeFileSync(live, readFileSync(backup));
    expect(statSync(live).ino).toBe(inode);
    site = await restartSite(site, remote.url, remote.key);
    const restored = await paired(site);
    expect(site.proc.output(), site.proc.output()).toContain('older than its marker');
    expect(restored.incarnation).not.toBe(before.incarnation);
    expect(restored.incarnation).not.toBe(copied.incarnation);
    const mine = await remoteLeases(remote, restored.site_id, restored.incarnation);
    expect(mine).toHaveLength(2);
    for (const b of mine) expect([...originalBlocks, ...copyActive]).not.toContain(b);
  });

  it('pairing claims the blocks a standalone took; a block another site holds is dropped and its minted slugs reported', async () => {
    const remote = await startRemote();
    const a = await startSite(remote.url, remote.key);
    await paired(a);
    const [heldByA1, heldByA2] = (await leaseBlocksOf(a.dataDir)) as [number, number];

    // A standalone instance used on its own first: it picks its own block.
    const standaloneProc = await spawn(dir());
    const sKey = await firstKey(standaloneProc);
    const sDir = standaloneProc.output().match(/Data: (.*)\/waymark\.sqlite/)![1]!;
    const early: string[] = [];
    for (let i = 0; i < 3; i++) early.push((await apiRequest(standaloneProc.url, 'POST', '/nodes', node(`s${i}`), sKey)).body.data.slug);
    await stop(standaloneProc);
    const [ownBlock] = await readDb(sDir, (db) => db.pluck<number>("SELECT block FROM slug_blocks WHERE source = 'local'"));
    // Two standalones can pick the same block (odds ~ n²/2²⁵); force it: this one also "took"
    // both of A's blocks, one of them with 5 slugs minted.
    const w = new BetterSqlite3(join(sDir, 'waymark.sqlite'));
    w.prepare("INSERT INTO slug_blocks (block, next_offset, source, acquired_at) VALUES (?, 5, 'local', '2026-01-01T00:00:00.000Z'), (?, 0, 'local', '2026-01-01T00:00:00.000Z')").run(heldByA1, heldByA2);
    w.close();

    const s = await startSite(remote.url, remote.key, sDir, sKey);
    const status = await paired(s);
    expect(status.conflicts).toEqual([
      {
        id: expect.any(Number),
        kind: 'block_conflict',
        detail: { block: heldByA1, reason: 'held_by_other_site', slugs_minted: 5, first_slugs: expect.any(Array) },
        detected_at: expect.any(String),
        resolved_at: null,
      },
    ]);
    expect(status.conflicts[0].detail.first_slugs).toHaveLength(5);
    const states = await readDb(sDir, (db) => db.all('SELECT block, state, used, reason FROM sync_site_blocks ORDER BY state, block'));
    expect(states).toEqual(
      expect.arrayContaining([
        { block: heldByA1, state: 'dropped', used: 5, reason: 'held_by_other_site' },
        { block: heldByA2, state: 'dropped', used: 0, reason: 'held_by_other_site' },
        { block: ownBlock, state: 'leased', used: null, reason: 'claimed at pairing' },
      ]),
    );
    // Its own block is now a lease and it keeps minting from it; the remote has it on record.
    expect(await readDb(sDir, (db) => db.get('SELECT source, next_offset FROM slug_blocks WHERE block = ?', ownBlock))).toEqual({ source: 'lease', next_offset: 3 });
    expect(await remoteLeases(remote, status.site_id)).toContain(ownBlock);
    const next = await s.api('POST', '/nodes', node('after pairing'));
    expect(next.status).toBe(201);
    const verified = await apiRequest(remote.url, 'POST', '/sync/slugs/verify', { site_id: status.site_id, slugs: [...early, next.body.data.slug] }, remote.key);
    expect(verified.body.data.rejected).toEqual([]);
    expect(await readDb(sDir, (db) => db.value('SELECT next_offset FROM slug_blocks WHERE block = ?', ownBlock))).toBe(4);
  });

  it('a bit-for-bit copy that fools the local checks is caught by the remote at its first contact', async () => {
    const remote = await startRemote();
    let a = await startSite(remote.url, remote.key);
    const before = await paired(a);
    await stop(a.proc);
    const cloneDir = dir();
    cpSync(a.dataDir, cloneDir, { recursive: true });
    // A disk image keeps the inode; emulate it by recording the copy's own inode in the copy.
    const w = new BetterSqlite3(join(cloneDir, 'waymark.sqlite'));
    const recorded = JSON.parse(w.prepare("SELECT value FROM settings WHERE key = 'sync.instance'").pluck().get() as string);
    recorded.file_id = statSync(join(cloneDir, 'waymark.sqlite'), { bigint: true }).ino.toString();
    w.prepare("UPDATE settings SET value = ? WHERE key = 'sync.instance'").run(JSON.stringify(recorded));
    w.close();

    a = await restartSite(a, remote.url, remote.key);
    await waitFor('the original to renew its token', async () => (await statusOf(a)).last_success_at !== null);
    const clone = await startSite(remote.url, remote.key, cloneDir, a.key);
    const cloned = await waitFor('the clone to re-pair', async () => {
      const st = await statusOf(clone);
      return st.paired && st.incarnation !== before.incarnation && st.reserve.blocks === 2 ? st : undefined;
    });
    expect(clone.proc.output()).toContain('another copy of this data has used this incarnation');
    expect(cloned.site_id).toBe(before.site_id);
    const originalBlocks = await leaseBlocksOf(a.dataDir);
    const cloneActive = await readDb(cloneDir, (db) =>
      db.pluck<number>(`SELECT block FROM slug_blocks WHERE source = 'lease' AND next_offset < ${BLOCK_SIZE}`),
    );
    expect(cloneActive).toHaveLength(2);
    for (const b of cloneActive) expect(originalBlocks).not.toContain(b);
    // The original was not disturbed.
    expect((await statusOf(a)).incarnation).toBe(before.incarnation);
  });

  for (const fault of ['hold-response', 'hold-request'] as const) {
    it(`SIGKILL of the site during a lease request (${fault === 'hold-response' ? 'after the remote committed' : 'before the remote saw it'}) loses no block and uses none twice`, async () => {
      const remote = await startRemote();
      const proxy = await startFaultProxy(remote.url);
      proxies.push(proxy);
      proxy.rule = (method, path) => (method === 'POST' && path === '/v1/sync/leases' ? fault : 'pass');
      let site = await startSite(proxy.url, remote.key);
      const call = await proxy.nextHeld();
      expect(JSON.parse(call.body)).toMatchObject({ want: 2 });
      if (fault === 'hold-response') expect(call.status).toBe(200);
      await kill(site.proc);

      const { siteId, incarnation } = await readDb(site.dataDir, async (db) => ({
        siteId: (await db.value<string>("SELECT value FROM settings WHERE key = 'sync.site_id'"))!,
        incarnation: (await db.value<string>("SELECT value FROM settings WHERE key = 'sync.incarnation'"))!,
      }));
      expect(await leaseBlocksOf(site.dataDir)).toEqual([]);
      const granted = await remoteLeases(remote, siteId, incarnation);
      expect(granted).toHaveLength(fault === 'hold-response' ? 2 : 0);

      proxy.rule = () => 'pass';
      site = await restartSite(site, proxy.url, remote.key);
      const status = await paired(site);
      expect(status.incarnation).toBe(incarnation);
      const held = await leaseBlocksOf(site.dataDir);
      // Exactly the blocks the remote has on record for this incarnation: none lost, none extra.
      expect(await remoteLeases(remote, siteId, incarnation)).toEqual(held);
      expect(held).toHaveLength(2);
      if (fault === 'hold-response') expect(held).toEqual(granted);
      const res = await site.api('POST', '/nodes', node('after crash'));
      expect(res.status).toBe(201);
    });
  }
});
