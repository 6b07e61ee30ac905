import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keychainSecretStore } from '../../main/secrets.ts';
import { apiRequest, startTestServer } from '../support/server.ts';
import { freePort } from '../support/receiver.ts';
import { dir, firstKey, readDb, type Site, spawn, startRemote, statusOf, stop, waitFor } from './support.ts';
import { count } from '../support/rows.ts';

/*
 * Runtime pairing (POST /v1/sync/pair) between real CLI processes on loopback: a remote and a
 * standalone site started without --remote, paired while running, then restarted.
 */

async function start(dataDir = dir(), key?: string, args: string[] = []): Promise<Site> {
  const proc = await spawn(dataDir, args);
  const k = key ?? (await firstKey(proc));
  return { dataDir, proc, key: k, api: (method, path, body) => apiRequest(proc.url, method, path, body, k) };
}

async function restart(site: Site, args: string[] = []): Promise<Site> {
  await stop(site.proc);
  return start(site.dataDir, site.key, args);
}

async function createNode(site: Site): Promise<string> {
  const res = await site.api('POST', '/nodes', { label: 'Door', function_type: 'redirect', payload: { url: 'https://example.com' } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.slug as string;
}

async function verify(remote: { url: string; key: string }, siteId: string, slugs: string[]) {
  const res = await apiRequest(remote.url, 'POST', '/sync/slugs/verify', { site_id: siteId, slugs }, remote.key);
  expect(res.status).toBe(200);
  return res.body.data as { accepted: string[]; rejected: unknown[] };
}

function secretsFile(site: Site): string {
  return join(site.dataDir, 'secrets.json');
}

describe('runtime pairing', () => {
  it('pairs a running standalone with a remote, keeps the key outside the database, stays paired after a restart', async () => {
    const remote = await startRemote();
    const remoteUrl = remote.url;
    let site = await start();
    const before = await createNode(site); // minted standalone, from a block the site picked itself
    const standalone = (await site.api('GET', '/sync/status')).body.data;
    expect(standalone).toMatchObject({ mode: 'standalone', paired: false, remote: null });

    // Wrong key: the remote's 401 comes back as a 422 on the key; nothing is stored.
    const wrong = await site.api('POST', '/sync/pair', { remote: remoteUrl, remote_key: 'wmk_notAKey' });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toMatchObject({ data: null, details: { remote_key: expect.stringMatching(/refused this key \(401\)/) } });
    expect(wrong.body.error).toMatch(/Cannot pair: Remote refused \(401\)/);
    // Unreachable remote: 422 on the remote, nothing stored.
    const nobody = await freePort();
    const down = await site.api('POST', '/sync/pair', { remote: `http://127.0.0.1:${nobody}`, remote_key: remote.key });
    expect(down.status).toBe(422);
    expect(down.body).toMatchObject({ data: null, details: { remote: expect.stringMatching(/No Waymark instance answered/) } });
    // Bad body.
    const bad = await site.api('POST', '/sync/pair', { remote: 'ftp://x', remote_key: '' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.details).sort()).toEqual(['remote', 'remote_key']);
    expect((await site.api('GET', '/sync/status')).body.data).toMatchObject({ mode: 'standalone', remote: null, paired: false });
    expect(() => statSync(secretsFile(site))).toThrow(/ENOENT/);
    expect((await createNode(site)).length).toBeGreaterThan(0); // still minting standalone

    const ok = await site.api('POST', '/sync/pair', { remote: `${remoteUrl}/`, remote_key: remote.key });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toMatchObject({ mode: 'site', remote: remoteUrl, paired: true, online: true, last_error: null, reserve: { blocks: 2, target_blocks: 2 } });
    const siteId = ok.body.data.site_id as string;

    // The key is in secrets.json (owner-only), not in the database.
    const file = secretsFile(site);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'sync.remote_key': remote.key });
    expect(readFileSync(join(site.dataDir, 'waymark.sqlite')).includes(remote.key)).toBe(false);

    // Minted now from leased blocks; the slug minted before pairing was claimed.
    const after = await createNode(site);
    expect(await verify(remote, siteId, [before, after])).toEqual({ accepted: [before, after], rejected: [] });

    // Already paired: with the same remote or another, refused with a clear 409.
    const again = await site.api('POST', '/sync/pair', { remote: remoteUrl, remote_key: remote.key });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ data: null, error: `This instance is already paired with ${remoteUrl}` });
    const other = await site.api('POST', '/sync/pair', { remote: `http://127.0.0.1:${nobody}`, remote_key: remote.key });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatch(/pairing it with another remote is not supported/);

    // Restarted without any flag: paired with the stored key, online, minting from its leases.
    site = await restart(site);
    expect(site.proc.output()).toContain(`Paired with remote ${remoteUrl} (stored key)`);
    const status = await waitFor('the restarted site to reach its remote', async () => {
      const s = await statusOf(site);
      return s.online === true ? s : undefined;
    });
    expect(status).toMatchObject({ mode: 'site', remote: remoteUrl, paired: true, site_id: siteId, last_error: null, reserve: { blocks: 2 } });
    const later = await createNode(site);
    expect(await verify(remote, siteId, [later])).toEqual({ accepted: [later], rejected: [] });
    // Push works for a site paired at runtime: the nodes reach the remote, in the key's organization.
    for (const slug of [before, after, later]) {
      await waitFor(`node ${slug} on the remote`, async () => (await apiRequest(remote.url, 'GET', `/nodes/${slug}`, undefined, remote.key)).status === 200);
    }
    // The organization that paired is the one bound to the remote's.
    const orgId = (await site.api('GET', '/instance')).body.data.organization.id as string;
    expect(await readDb(site.dataDir, (db) => db.value("SELECT value FROM settings WHERE key = 'sync.local_org'"))).toBe(orgId);
    const sites = (await apiRequest(remote.url, 'GET', '/sync/sites', undefined, remote.key)).body.data as Array<{ site_id: string }>;
    expect(sites.map((s) => s.site_id)).toEqual([siteId]);
  });

  it('--remote-key at start wins over the stored key; a paired site started without a key takes a new one at runtime', async () => {
    const remote = await startRemote();
    const remoteUrl = remote.url;
    // Paired at start with flags, but the key is never stored.
    const dataDir = dir();
    let site = await start(dataDir, undefined, ['--remote', remoteUrl, '--remote-key', remote.key]);
    await waitFor('pairing', async () => (await statusOf(site)).paired === true);
    const flagged = await site.api('POST', '/sync/pair', { remote: remoteUrl, remote_key: remote.key });
    expect(flagged.status).toBe(409);
    expect(flagged.body.error).toMatch(/started with --remote-key/);
    expect(() => statSync(join(dataDir, 'secrets.json'))).toThrow(/ENOENT/);

    // Restarted without a key: paired but offline; the key given at runtime is checked, stored, used.
    site = await restart(site);
    expect((await site.api('GET', '/sync/status')).body.data).toMatchObject({ mode: 'site', paired: true, last_error: expect.stringMatching(/No remote key/) });
    const wrong = await site.api('POST', '/sync/pair', { remote: remoteUrl, remote_key: 'wmk_wrong' });
    expect(wrong.status).toBe(422);
    expect(() => statSync(join(dataDir, 'secrets.json'))).toThrow(/ENOENT/);
    const ok = await site.api('POST', '/sync/pair', { remote: remoteUrl, remote_key: remote.key });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toMatchObject({ online: true, last_error: null, paired: true });
    expect(await createNode(site)).toBeTruthy();
  });

  it('a secret store that cannot keep the key (desktop app without a keychain) fails the pairing and stores nothing; a retry pairs', async () => {
    const remote = await startTestServer();
    let keychain = false;
    // Electron's safeStorage contract, without Electron (it cannot run here): see main/secrets.test.ts.
    const safe = {
      isEncryptionAvailable: () => keychain,
      encryptString: (plain: string) => Buffer.from(plain).reverse(),
      decryptString: (enc: Buffer) => Buffer.from(enc).reverse().toString(),
    };
    const siteDir = dir();
    const file = join(siteDir, 'keychain-secrets.json');
    const site = await startTestServer({ dataDir: siteDir, secrets: keychainSecretStore(file, safe) });
    try {
      const refused = await site.api('POST', '/sync/pair', { remote: remote.url, remote_key: remote.apiKey });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({ data: null, error: expect.stringMatching(/^Cannot pair: Cannot keep the remote key safely: the system keychain is not available\. Start the server with --remote-key/) });
      expect((await site.api('GET', '/sync/status')).body.data).toMatchObject({ mode: 'standalone', remote: null, paired: false, remote_org: null });
      expect(() => statSync(file)).toThrow(/ENOENT/);
      expect((await site.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: { url: 'https://example.com' } })).status).toBe(201);

      // The remote had registered the site: the retry presents the same fencing token and is accepted.
      keychain = true;
      const ok = await site.api('POST', '/sync/pair', { remote: remote.url, remote_key: remote.apiKey });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.data).toMatchObject({ mode: 'site', paired: true, online: true, reserve: { blocks: 2 } });
      expect(readFileSync(file, 'utf8')).not.toContain(remote.apiKey);
    } finally {
      await site.close();
      await remote.close();
    }
  });

  it('a site with two local organizations pushes only the one bound to the remote', async () => {
    const remote = await startTestServer();
    const site = await startTestServer({ dataDir: dir() });
    try {
      const other = await site.running.app.services.keys.createOrgWithKey('Other team', 'First key');
      const asOther = (method: string, path: string, body?: unknown) => apiRequest(site.url, method, path, body, other.apiKey);
      const ok = await site.api('POST', '/sync/pair', { remote: remote.url, remote_key: remote.apiKey });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const node = { function_type: 'redirect', payload: { url: 'https://example.com' } };
      const mine = (await site.api('POST', '/nodes', { ...node, label: 'Bound org' })).body.data.slug as string;
      const theirs = (await asOther('POST', '/nodes', { ...node, label: 'Other org' })).body.data.slug as string;
      await asOther('PATCH', `/nodes/${theirs}`, { label: 'Other org, edited' });
      const theirTemplate = await asOther('POST', '/templates', { name: 'Theirs', function_type: 'redirect', payload: { url: 'https://example.com' } });
      expect(theirTemplate.status).toBe(201);
      expect((await fetch(`${site.url}/v/${theirs}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Mobile/15E148' } })).status).toBe(302);

      const status = (await site.api('POST', '/sync/run')).body.data;
      expect(status).toMatchObject({ last_error: null, pending_changes: 0 });
      expect((await apiRequest(remote.url, 'GET', `/nodes/${mine}`, undefined, remote.apiKey)).status).toBe(200);
      expect((await apiRequest(remote.url, 'GET', `/nodes/${theirs}`, undefined, remote.apiKey)).status).toBe(404);
      const templates = (await apiRequest(remote.url, 'GET', '/templates', undefined, remote.apiKey)).body.data as Array<{ name: string }>;
      expect(templates.map((t) => t.name)).not.toContain('Theirs');
      expect(await count(remote.running.store, 'SELECT count(*) FROM scan_events')).toBe(0);
    } finally {
      await site.close();
      await remote.close();
    }
  });
});
