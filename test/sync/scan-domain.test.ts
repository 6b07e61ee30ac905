import { afterEach, describe, expect, it } from 'vitest';
import { apiRequest } from '../support/server.ts';
import { paired, type Remote, type Site, startBusyRemote, startSite, stop } from './support.ts';

/*
 * An organization's scan domain travels with sync (issue 20): set on the remote, it reaches the
 * site, whose node URLs, labels and NFC writes then use it; set on the site, it reaches the
 * remote. Real server processes on loopback.
 */
const running: Array<{ proc: Remote['proc'] }> = [];
afterEach(async () => {
  for (const r of running.splice(0)) await stop(r.proc);
});

async function syncRound(site: Site): Promise<void> {
  const res = await site.api('POST', '/sync/run');
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.last_error).toBeNull();
}

describe('sync: the scan domain', () => {
  it('a scan_base set on the remote reaches a site (and one set on the site later reaches the remote)', async () => {
    const remote = await startBusyRemote();
    running.push(remote);
    const site = await startSite(remote.url, remote.key);
    running.push(site);
    await paired(site);
    const remoteApi = (method: string, path: string, body?: unknown) => apiRequest(remote.proc.url, method, path, body, remote.key);

    const set = await remoteApi('PATCH', '/organization', { scan_base: 'https://scan.example.com' });
    expect(set.status, set.text).toBe(200);
    // Before a round the site still prints with its own default (loopback: refused).
    expect((await site.api('GET', '/organization')).body.data.scan_base_source).toBe('instance');

    await syncRound(site);
    const onSite = (await site.api('GET', '/organization')).body.data;
    expect(onSite).toMatchObject({ scan_base: 'https://scan.example.com', scan_base_source: 'organization', scan_base_reach: 'public' });
    const node = await site.api('POST', '/nodes', { label: 'Gate', function_type: 'redirect', payload: { url: 'https://example.com' } });
    expect(node.body.data.url).toBe(`https://scan.example.com/v/${node.body.data.slug}`);
    const label = await fetch(`${site.proc.url}/v1/nodes/${node.body.data.slug}/label.pdf`, { headers: { authorization: `Bearer ${site.key}` } });
    expect(label.status).toBe(200);

    // The other way: the site's later edit wins on the remote (last writer wins).
    expect((await site.api('PATCH', '/organization', { scan_base: 'https://site.example.com' })).status).toBe(200);
    await syncRound(site);
    expect((await remoteApi('GET', '/organization')).body.data.scan_base).toBe('https://site.example.com');
    await syncRound(site);
    expect((await site.api('GET', '/organization')).body.data.scan_base).toBe('https://site.example.com');
  }, 120_000);
});
