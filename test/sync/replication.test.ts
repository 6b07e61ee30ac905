import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startFaultProxy } from '../support/faultProxy.ts';
import { apiRequest, copyInstanceData } from '../support/server.ts';
import {
  createOrg,
  dir,
  kill,
  node,
  ok,
  paired,
  proxies,
  readDb,
  type Remote,
  restartRemote,
  restartSite,
  scan,
  scanCount,
  scansOf,
  snapshot,
  type Site,
  startBusyRemote,
  startSite,
  statusOf,
  stop,
  sync,
  syncAll,
  waitFor,
} from './support.ts';

/*
 * Push and pull between real server processes on loopback: a remote and two sites (the CLI with
 * --remote), with writes on every side, offline periods and SIGKILLs; afterwards every site holds
 * what the remote holds.
 */

async function remoteApi(remote: Remote, method: string, path: string, body?: unknown) {
  return apiRequest(remote.proc.url, method, path, body, remote.key);
}

describe('sync: push and pull between processes', { timeout: 180_000 }, () => {
  it('creates, edits, deletes, batches and scans on every side, with offline periods, converge everywhere', async () => {
    const remote = await startBusyRemote();
    const a = await startSite(remote.url, remote.key);
    const b = await startSite(remote.url, remote.key);
    await Promise.all([paired(a), paired(b)]);

    // Writes on each side, then a sync: everyone has everything.
    const tpl = await ok(a.api('POST', '/templates', { name: 'T', function_type: 'redirect', payload: { url: 'https://example.com/t' } }), 201);
    const na = await ok(a.api('POST', '/nodes', node('from-a')), 201);
    await ok(a.api('POST', `/nodes/${na.slug}/rules`, { rule_type: 'device_based', conditions: { devices: ['mobile'] }, function_type: 'redirect', payload: { url: 'https://example.com/m' } }), 201);
    const nb = await ok(b.api('POST', '/nodes', node('from-b')), 201);
    const nr = await ok(remoteApi(remote, 'POST', '/nodes', node('from-remote')), 201);
    await ok(remoteApi(remote, 'POST', '/webhooks', { url: 'https://hooks.example.com/w', events: ['node.created'] }), 201);
    await syncAll(a, b);
    expect(await snapshot(a.dataDir)).toEqual(await snapshot(remote.dataDir));
    expect(await snapshot(b.dataDir)).toEqual(await snapshot(remote.dataDir));
    expect((await snapshot(remote.dataDir)).nodes.map((n: any) => n.label).sort()).toEqual(['from-a', 'from-b', 'from-remote']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await snapshot(remote.dataDir)).templates).toHaveLength(1);
    void tpl;
    // The webhook secret travels opened; each side keeps it sealed under its own data key.
    const sealed = (dataDir: string) => readDb(dataDir, (db) => db.pluck<string>('SELECT secret FROM webhooks'));
    const [onSite, atRemote] = [await sealed(a.dataDir), await sealed(remote.dataDir)];
    expect([...onSite, ...atRemote].every((v) => v.startsWith('enc1:'))).toBe(true);
    expect(onSite[0]).not.toBe(atRemote[0]);
    // API keys come down (hash only), so the company key works at a site; a site's keys stay local.
    const hashes = (dataDir: string) => readDb(dataDir, (db) => db.pluck<string>('SELECT key_hash FROM api_keys'));
    expect(await hashes(a.dataDir)).toEqual(expect.arrayContaining(await hashes(remote.dataDir)));
    const [onA, onB, onRemote] = [await hashes(a.dataDir), await hashes(b.dataDir), await hashes(remote.dataDir)];
    expect(onRemote.filter((h) => onA.includes(h) && onB.includes(h))).toHaveLength(onRemote.length);
    expect((await apiRequest(a.proc.url, 'GET', `/nodes/${nb.slug}`, undefined, remote.key)).status).toBe(200);
    expect((await apiRequest(remote.proc.url, 'GET', '/nodes', undefined, a.key)).status).toBe(401);

    // The remote goes away: both sites keep working (edits, a delete, a batch, scans).
    await stop(remote.proc);
    await ok(a.api('PATCH', `/nodes/${nb.slug}`, { label: 'b-edited-on-a' }));
    await ok(b.api('PATCH', `/nodes/${nr.slug}`, { status: 'paused' }));
    await ok(b.api('DELETE', `/nodes/${na.slug}`));
    const batch = await ok(a.api('POST', '/batches', { label: 'Hall', prefix: 'H', quantity: 40, function_type: 'redirect', base_payload: { url: 'https://example.com/h' } }), 201);
    await waitFor('the batch to be generated', async () => (await a.api('GET', `/batches/${batch.id}`)).body.data?.status === 'ready');
    // b uses the same prefix offline: the same serial labels get printed at both sites.
    const clash = await ok(b.api('POST', '/batches', { label: 'Dock', prefix: 'H', quantity: 2, function_type: 'redirect', base_payload: { url: 'https://example.com/d' } }), 201);
    await waitFor('the second batch to be generated', async () => (await b.api('GET', `/batches/${clash.id}`)).body.data?.status === 'ready');
    await scan(a, nb.slug, 3);
    await scan(b, nb.slug, 2);
    await waitFor('scans recorded', async () => (await scanCount(a, nb.slug)) === 3 && (await scanCount(b, nb.slug)) === 2);
    expect((await statusOf(a)).pending_changes).toBeGreaterThan(40);

    await restartRemote(remote);
    await syncAll(a, b);
    const r = (await snapshot(remote.dataDir));
    expect(await snapshot(a.dataDir)).toEqual(r);
    expect(await snapshot(b.dataDir)).toEqual(r);
    expect(r.nodes.filter((n: any) => n.batch_id === batch.id)).toHaveLength(40); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r.nodes.find((n: any) => n.slug === na.slug)).toBeUndefined(); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r.tombstoned).toContain(na.slug);
    expect(r.rules).toHaveLength(0);
    expect((r.nodes.find((n: any) => n.slug === nb.slug) as any).label).toBe('b-edited-on-a'); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((r.nodes.find((n: any) => n.slug === nr.slug) as any).status).toBe('paused'); // eslint-disable-line @typescript-eslint/no-explicit-any
    // Both batches are kept whole; the serials printed twice are logged, not refused.
    expect(r.nodes.filter((n: any) => n.batch_id === clash.id)).toHaveLength(2); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r.nodes.filter((n: any) => n.serial === 'H-001')).toHaveLength(2); // eslint-disable-line @typescript-eslint/no-explicit-any
    const clashes = (await ok(remoteApi(remote, 'GET', '/sync/conflicts'))).filter((c: any) => c.kind === 'serial_clash'); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(clashes).toHaveLength(2);
    // Scans went up once each; the remote counts both sites' scans.
    expect(await scansOf(remote.dataDir)).toMatchObject({ distinct: 5, total: 5 });
    expect(await scanCount({ dataDir: remote.dataDir } as Site, nb.slug)).toBe(5);
    // Webhooks: the remote records the events of what the sites pushed; the sites deliver nothing.
    const events = await readDb(remote.dataDir, (db) => db.all<{ type: string; data_json: string }>('SELECT type, data_json FROM outbox_events ORDER BY seq'));
    const created = events.filter((e) => e.type === 'node.created').map((e) => JSON.parse(e.data_json).label);
    expect(created).toEqual(expect.arrayContaining(['from-a', 'from-b', 'from-remote']));
    // No endpoint subscribes to node.scanned: the pushed scans record none, as local scans would not.
    expect(events.filter((e) => e.type === 'node.scanned')).toHaveLength(0);
    expect(events.filter((e) => e.type === 'node.deleted').map((e) => JSON.parse(e.data_json).slug)).toEqual([na.slug]);
    expect(events.filter((e) => e.type === 'batch.completed')).toHaveLength(2);
    for (const site of [a, b]) expect(await readDb(site.dataDir, (db) => db.value('SELECT COUNT(*) FROM webhook_deliveries'))).toBe(0);
    // Pushing again changes nothing.
    await syncAll(a, b);
    expect((await scansOf(remote.dataDir)).total).toBe(5);
    // Once an endpoint subscribes, the scans pushed after that are events at the remote.
    const hooks = (await ok(remoteApi(remote, 'GET', '/webhooks'))) as Array<{ id: string }>;
    await ok(remoteApi(remote, 'PATCH', `/webhooks/${hooks[0]?.id}`, { events: ['node.created', 'node.scanned'] }));
    await syncAll(a, b);
    await scan(a, nb.slug, 2);
    await waitFor('scans recorded', async () => (await scanCount(a, nb.slug)) === 5);
    await syncAll(a, b);
    const scanned = await readDb(remote.dataDir, (db) => db.pluck<string>("SELECT data_json FROM outbox_events WHERE type = 'node.scanned'"));
    expect(scanned.map((d) => JSON.parse(d).node.slug)).toEqual([nb.slug, nb.slug]);
  });

  it('concurrent edits resolve by last writer the same everywhere; delete beats a later edit, which is logged', async () => {
    const remote = await startBusyRemote();
    const a = await startSite(remote.url, remote.key);
    const b = await startSite(remote.url, remote.key);
    await Promise.all([paired(a), paired(b)]);
    const n1 = await ok(a.api('POST', '/nodes', node('one')), 201);
    const n2 = await ok(a.api('POST', '/nodes', node('two')), 201);
    await syncAll(a, b);

    await stop(remote.proc);
    // Same node, different fields and the same field, on both sites while offline.
    await ok(a.api('PATCH', `/nodes/${n1.slug}`, { label: 'a-label' }));
    await ok(b.api('PATCH', `/nodes/${n1.slug}`, { status: 'paused' }));
    await new Promise((r) => setTimeout(r, 5)); // distinct HLC wall times (order of the edits, not a timing check)
    await ok(b.api('PATCH', `/nodes/${n1.slug}`, { label: 'b-label-later' }));
    // a deletes n2; b edits it afterwards without knowing.
    await ok(a.api('DELETE', `/nodes/${n2.slug}`));
    await ok(b.api('PATCH', `/nodes/${n2.slug}`, { label: 'edited-after-delete' }));
    await restartRemote(remote);
    await syncAll(a, b);

    const r = (await snapshot(remote.dataDir));
    expect(await snapshot(a.dataDir)).toEqual(r);
    expect(await snapshot(b.dataDir)).toEqual(r);
    const one = r.nodes.find((n: any) => n.id === n1.id); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(one).toMatchObject({ label: 'b-label-later', status: 'paused' });
    expect(r.nodes.find((n: any) => n.id === n2.id)).toBeUndefined(); // eslint-disable-line @typescript-eslint/no-explicit-any
    const conflicts = await ok(remoteApi(remote, 'GET', '/sync/conflicts'));
    const late = conflicts.find((c: any) => c.kind === 'edit_after_delete'); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(late.detail).toMatchObject({ entity: 'node', entity_id: n2.id, fields: { label: 'edited-after-delete' } });
    // The site whose edit lost hears of it from the remote (the other site does not).
    const atB = (await ok(b.api('GET', '/sync/conflicts'))) as Array<{ kind: string; detail: Record<string, unknown> }>;
    expect(atB.filter((c) => c.detail.found_at === 'remote')).toEqual([
      expect.objectContaining({ kind: 'edit_after_delete', detail: expect.objectContaining({ entity_id: n2.id, site_id: late.detail.site_id }) }),
    ]);
    const atA = (await ok(a.api('GET', '/sync/conflicts'))) as Array<{ detail: Record<string, unknown> }>;
    expect(atA.filter((c) => c.detail.found_at === 'remote')).toEqual([]);
    await syncAll(a, b); // sent down once
    expect(((await ok(b.api('GET', '/sync/conflicts'))) as Array<{ detail: Record<string, unknown> }>).filter((c) => c.detail.found_at === 'remote')).toHaveLength(1);
    // Conflicts belong to their organization: another organization's key on the remote sees none.
    const other = await createOrg(remote.dataDir, 'Other');
    const asOther = (method: string, path: string) => apiRequest(remote.url, method, path, undefined, other.api_key);
    expect((await ok(asOther('GET', '/sync/conflicts')))).toEqual([]);
    expect((await ok(asOther('GET', '/sync/status'))).conflicts).toEqual([]);
    expect((await asOther('POST', `/sync/conflicts/${late.id}/resolve`)).status).toBe(404);
    // Resolving a conflict takes it off the status.
    expect((await ok(remoteApi(remote, 'GET', '/sync/status'))).conflicts.map((c: any) => c.id)).toContain(late.id); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await ok(remoteApi(remote, 'POST', `/sync/conflicts/${late.id}/resolve`))).resolved_at).not.toBeNull();
    expect((await ok(remoteApi(remote, 'GET', '/sync/status'))).conflicts).toEqual([]);
  });

  it('refuses a push whose clock is more than 5 minutes ahead, and pushes are idempotent by seq', async () => {
    const remote = await startBusyRemote();
    const site = { site_id: 'site-clock-test', incarnation: 'inc-clock-test' };
    await ok(remoteApi(remote, 'POST', '/sync/sites', { ...site, name: 'fake', token: null, next_token: 'token-0001', claims: [] }));
    const change = (seq: number, ms: number) => ({
      seq,
      entity: 'template',
      entity_id: `tpl-${seq}`,
      op: 'upsert',
      fields: { name: `T${seq}`, function_type: 'redirect', payload_json: '{"url":"https://example.com"}', locked_fields_json: '[]', created_at: new Date(ms).toISOString(), updated_at: new Date(ms).toISOString() },
      hlc: ms.toString(16).padStart(12, '0') + '0000',
      writer: `${site.site_id}/${site.incarnation}`,
      group: null,
    });
    const ahead = await remoteApi(remote, 'POST', '/sync/push', { ...site, token: 'token-0001', next_token: 'token-0002', after_seq: 0, changes: [change(1, Date.now() + 6 * 60_000)], scans: [] });
    expect(ahead.status, ahead.text).toBe(409);
    expect(ahead.body.error).toMatch(/^Clock ahead by \d+ s/);

    const push = (token: string, next: string, after: number, changes: unknown[]) =>
      remoteApi(remote, 'POST', '/sync/push', { ...site, token, next_token: next, after_seq: after, changes, scans: [] });
    expect((await ok(push('token-0001', 'token-0002', 0, [change(1, Date.now()), change(2, Date.now())]))).acked_seq).toBe(2);
    // The same call again (its answer was lost), now carrying one more change: nothing applied
    // twice, and the new change applied rather than acknowledged unseen.
    expect((await ok(push('token-0001', 'token-0002', 0, [change(1, Date.now()), change(2, Date.now()), change(3, Date.now())]))).acked_seq).toBe(3);
    // Overlapping: 3 is skipped, 4 applied. A gap: 409 with the expected seq.
    expect((await ok(push('token-0002', 'token-0003', 2, [change(3, Date.now()), change(4, Date.now())]))).acked_seq).toBe(4);
    const gap = await push('token-0003', 'token-0004', 7, [change(8, Date.now())]);
    expect(gap.status, gap.text).toBe(409);
    expect(gap.body.details).toEqual({ expected_seq: '4' });
    // A pushed API key is acknowledged and ignored: keys only come down.
    const key = { ...change(5, Date.now()), entity: 'api_key', entity_id: 'key-from-site', fields: { name: 'x', prefix: 'wmk_x', key_hash: 'f'.repeat(64), plan: 'enterprise', limits_json: null, created_at: new Date().toISOString(), revoked_at: null } };
    expect((await ok(push('token-0003', 'token-0004', 4, [key]))).acked_seq).toBe(5);
    expect(await readDb(remote.dataDir, (db) => db.value("SELECT COUNT(*) FROM api_keys WHERE id = 'key-from-site'"))).toBe(0);
    expect(await readDb(remote.dataDir, (db) => db.value("SELECT COUNT(*) FROM templates WHERE id LIKE 'tpl-%'"))).toBe(4);
    // Sync pushes may be large (8 MiB, not the API's 64 KiB): 300 KiB passes, 9 MiB is refused.
    const big = (n: number, size: number) => Array.from({ length: n }, (_, i) => ({ ...change(6 + i, Date.now()), fields: { ...change(6 + i, Date.now()).fields, payload_json: JSON.stringify({ url: `https://example.com/${'x'.repeat(size)}` }) } }));
    expect((await ok(push('token-0004', 'token-0005', 5, big(300, 1000)))).acked_seq).toBe(305);
    const tooBig = await push('token-0005', 'token-0006', 305, big(9, 1024 * 1024));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toBe('Request body too large (limit 8 MiB)');
  });

  for (const where of ['push', 'pull'] as const) {
    it(`SIGKILL of the site during a ${where} whose answer was lost after the remote committed: no loss, no duplicate scan`, async () => {
      const remote = await startBusyRemote();
      const proxy = await startFaultProxy(remote.url);
      proxies.push(proxy);
      let site = await startSite(proxy.url, remote.key);
      const other = await startSite(remote.url, remote.key);
      await Promise.all([paired(site), paired(other)]);
      const n = await ok(site.api('POST', '/nodes', node('k')), 201);
      await ok(other.api('POST', '/nodes', node('from-other')), 201);
      await sync(other);
      await scan(site, n.slug, 4);
      await waitFor('scans recorded', async () => (await scanCount(site, n.slug)) === 4);

      const path = where === 'push' ? '/v1/sync/push' : '/v1/sync/changes';
      proxy.rule = (method, p) => (p.startsWith(path) ? 'hold-response' : 'pass');
      void site.api('POST', '/sync/run').catch(() => undefined);
      const held = await proxy.nextHeld();
      expect(held.status).toBe(200);
      await kill(site.proc);
      proxy.rule = () => 'pass';
      site = await restartSite(site, proxy.url, remote.key);
      await syncAll(site, other);
      const r = (await snapshot(remote.dataDir));
      expect(await snapshot(site.dataDir)).toEqual(r);
      expect(await snapshot(other.dataDir)).toEqual(r);
      expect(r.nodes).toHaveLength(2);
      expect(await scansOf(remote.dataDir)).toMatchObject({ total: 4, distinct: 4 });
      expect(await scanCount({ dataDir: remote.dataDir } as Site, n.slug)).toBe(4);
    });
  }

  it('a remote restored from a backup gets everything back from its sites', async () => {
    const remote = await startBusyRemote();
    const site = await startSite(remote.url, remote.key);
    await paired(site);
    const n1 = await ok(site.api('POST', '/nodes', node('before-backup')), 201);
    await syncAll(site);
    await stop(remote.proc);
    // A backup: the data directory, and on PostgreSQL the database (CREATE DATABASE … TEMPLATE).
    const backup = dir();
    await copyInstanceData(remote.dataDir, backup);
    await restartRemote(remote);
    // Pushed after the backup: lost by the restore, pushed again by the site.
    await ok(site.api('PATCH', `/nodes/${n1.slug}`, { label: 'after-backup' }));
    const n2 = await ok(site.api('POST', '/nodes', node('after-backup-2')), 201);
    await scan(site, n2.slug, 2);
    await waitFor('scans recorded', async () => (await scanCount(site, n2.slug)) === 2);
    await syncAll(site);
    expect((await snapshot(remote.dataDir)).nodes).toHaveLength(2);
    const before = (await statusOf(site)).incarnation;
    await stop(remote.proc);
    rmSync(remote.dataDir, { recursive: true, force: true });
    await copyInstanceData(backup, remote.dataDir);
    await restartRemote(remote);
    expect((await snapshot(remote.dataDir)).nodes).toHaveLength(1);

    await syncAll(site);
    const status = await statusOf(site);
    expect(status.paired).toBe(true);
    // The restored remote had a stale fencing token: the site took a new incarnation and re-pushed.
    expect(status.incarnation).not.toBe(before);
    const r = (await snapshot(remote.dataDir));
    expect(await snapshot(site.dataDir)).toEqual(r);
    expect(r.nodes.map((n: any) => n.label).sort()).toEqual(['after-backup', 'after-backup-2']); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(await scansOf(remote.dataDir)).toMatchObject({ total: 2, distinct: 2 });
  });

  it('SIGKILL of the remote during a push (before and after it committed) and during a pull loses nothing and applies nothing twice', async () => {
    const remote = await startBusyRemote();
    const proxy = await startFaultProxy(remote.url);
    proxies.push(proxy);
    const site = await startSite(proxy.url, remote.key);
    await paired(site);
    /** Holds the site's next request to `path` (before or after the remote answered), kills the remote meanwhile, restarts it and syncs. */
    const killRemoteDuring = async (path: string, fault: 'hold-request' | 'hold-response') => {
      proxy.rule = (method, p) => (p.startsWith(path) ? fault : 'pass');
      const run = site.api('POST', '/sync/run').catch(() => undefined);
      await proxy.nextHeld();
      await kill(remote.proc);
      proxy.rule = () => 'pass';
      await run;
      await restartRemote(remote);
      await syncAll(site);
      expect(await snapshot(site.dataDir)).toEqual(await snapshot(remote.dataDir));
    };
    for (const fault of ['hold-request', 'hold-response'] as const) {
      const n = await ok(site.api('POST', '/nodes', node(`n-${fault}`)), 201);
      await scan(site, n.slug, 2);
      await waitFor('scans recorded', async () => (await scanCount(site, n.slug)) === 2);
      await killRemoteDuring('/v1/sync/push', fault);
    }
    expect(await scansOf(remote.dataDir)).toMatchObject({ total: 4, distinct: 4 });

    // And during a pull: the remote dies with the page on its way; the site re-pulls it after the restart.
    for (const fault of ['hold-request', 'hold-response'] as const) {
      await ok(remoteApi(remote, 'POST', '/nodes', node(`remote-${fault}`)), 201);
      await killRemoteDuring('/v1/sync/changes', fault);
    }
  });
});
