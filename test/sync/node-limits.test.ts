import { describe, expect, it } from 'vitest';
import { apiRequest } from '../support/server.ts';
import { paired, startBusyRemote, startSite, sync, waitFor } from './support.ts';

/*
 * Node limits travel with sync (issue 17 item 3): set on the remote, a site enforces them itself
 * (expiry, the scan limit on its own count, the password checked against the synced hash); set on
 * the site, they reach the remote, which counts the scans the site pushed. Real server processes
 * on loopback (test/sync/support.ts kills them after each test).
 */

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const DESTINATION = 'https://example.com/limited';
const LIMIT_FIELDS = ['expires_at', 'max_scans', 'password_protected', 'after_limit'] as const;

async function scan(base: string, slug: string, password?: string) {
  const init: RequestInit = { headers: { 'user-agent': IPHONE }, redirect: 'manual' };
  if (password !== undefined) {
    init.method = 'POST';
    init.headers = { 'user-agent': IPHONE, 'content-type': 'application/x-www-form-urlencoded' };
    init.body = new URLSearchParams({ password }).toString();
  }
  const res = await fetch(`${base}/v/${slug}`, init);
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

function limitsOf(node: Record<string, unknown>) {
  return Object.fromEntries(LIMIT_FIELDS.map((f) => [f, node[f]]));
}

describe('sync: node limits', () => {
  it('limits set at the remote are enforced at a site after a pull; set at the site, they reach the remote, which counts pushed scans', async () => {
    const remote = await startBusyRemote();
    const site = await startSite(remote.url, remote.key);
    await paired(site);
    const remoteApi = (method: string, path: string, body?: unknown) => apiRequest(remote.proc.url, method, path, body, remote.key);
    const create = async (extra: Record<string, unknown>) => {
      const res = await remoteApi('POST', '/nodes', { label: 'Limited', function_type: 'redirect', payload: { url: DESTINATION }, ...extra });
      expect(res.status, res.text).toBe(201);
      return res.body.data.slug as string;
    };
    const limited = await create({ max_scans: 2 });
    const expired = await create({ expires_at: '2020-01-01T00:00:00Z', after_limit: { type: 'redirect', url: 'https://example.com/ended' } });
    const gated = await create({ password: 'site-secret' });

    await sync(site);
    // The site and the remote show the same limits.
    for (const slug of [limited, expired, gated]) {
      const onSite = await site.api('GET', `/nodes/${slug}`);
      expect(onSite.status, onSite.text).toBe(200);
      expect(limitsOf(onSite.body.data)).toEqual(limitsOf((await remoteApi('GET', `/nodes/${slug}`)).body.data));
    }
    const at = site.proc.url;
    // One scan at the remote: its scan path now holds the node with a count of 1.
    expect((await scan(remote.proc.url, limited)).location).toBe(DESTINATION);
    // The scan limit, on the site's own count.
    expect((await scan(at, limited)).location).toBe(DESTINATION);
    expect((await scan(at, limited)).location).toBe(DESTINATION);
    const over = await scan(at, limited);
    expect(over.status).toBe(410);
    expect(over.text).toContain('reached its scan limit');
    // Expiry, on the site's clock, with the fallback.
    const late = await scan(at, expired);
    expect(late.status).toBe(302);
    expect(late.location).toBe('https://example.com/ended');
    // The password, checked against the hash that came down (the password itself never travels).
    const page = await scan(at, gated);
    expect(page.status).toBe(200);
    expect(page.text).toContain('password protected');
    expect(page.text).not.toContain(DESTINATION);
    expect((await scan(at, gated, 'wrong-secret')).status).toBe(403);
    const opened = await scan(at, gated, 'site-secret');
    expect(opened.status).toBe(302);
    expect(opened.location).toBe(DESTINATION);

    // The site's three scans reach the remote: 4 counted there, over max_scans 2 at once (no
    // change to the node drops the remote's cache: the push itself makes it read the count).
    await sync(site);
    expect((await remoteApi('GET', `/nodes/${limited}`)).body.data.scan_count).toBe(4);
    const head = async (base: string, slug: string) => (await fetch(`${base}/v/${slug}`, { method: 'HEAD', headers: { 'user-agent': IPHONE }, redirect: 'manual' })).status;
    await waitFor('the remote serves the pushed count', async () => (await head(remote.proc.url, limited)) === 410);

    // The other way: a limit raised at the site reaches the remote.
    expect((await site.api('PATCH', `/nodes/${limited}`, { max_scans: 10, after_limit: { type: 'redirect', url: 'https://example.com/more' } })).status).toBe(200);
    expect(await head(at, limited)).toBe(302);
    await sync(site);
    expect(limitsOf((await site.api('GET', `/nodes/${limited}`)).body.data)).toEqual(limitsOf((await remoteApi('GET', `/nodes/${limited}`)).body.data));
    expect((await remoteApi('GET', `/nodes/${limited}`)).body.data).toMatchObject({ max_scans: 10, after_limit: { type: 'redirect', url: 'https://example.com/more' } });
    await waitFor('the remote serves the raised limit', async () => (await head(remote.proc.url, limited)) === 302);
  }, 180_000);
});
