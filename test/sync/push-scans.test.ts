import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRequest, startTestServer, type TestServer } from '../support/server.ts';

/** A site's push that names a node of another organization at the remote (issue 15). */
describe('sync push: scans of another organization\'s node', () => {
  let remote: TestServer;
  beforeAll(async () => {
    remote = await startTestServer({ limits: 'unlimited' });
  });
  afterAll(async () => {
    await remote.close();
  });

  it('refuses them, says so, and does not count them in scans_acked', async () => {
    const other = await remote.running.app.services.keys.createOrgWithKey('Other organization', 'First key');
    const asOther = (method: string, path: string, body?: unknown) => apiRequest(remote.url, method, path, body, other.apiKey);
    const node = { function_type: 'redirect', payload: { url: 'https://example.com' } };
    const mine = (await remote.api('POST', '/nodes', { ...node, label: 'Ours' })).body.data.id as string;
    const theirs = (await asOther('POST', '/nodes', { ...node, label: 'Theirs' })).body.data.id as string;

    const site = { site_id: 'site-push-scans', incarnation: 'inc-push-scans' };
    expect((await remote.api('POST', '/sync/sites', { ...site, name: 'Site', token: null, next_token: 'token-0001', claims: [] })).status).toBe(200);
    const scan = (n: number, nodeId: string) => ({
      id: `${site.site_id}/${site.incarnation}:${n}`,
      node_id: nodeId,
      ts: Date.now(),
      device_type: 'mobile',
      os: 'ios',
      browser: null,
      country: null,
      source: 'qr',
      rule_id: null,
      outcome: 'redirect',
      is_bot: 0,
      visitor_hash: 'h',
    });
    const push = (token: string, next: string, scans: unknown[]) =>
      remote.api('POST', '/sync/push', { ...site, token, next_token: next, after_seq: 0, changes: [], scans });

    const res = await push('token-0001', 'token-0002', [scan(1, mine), scan(2, theirs), scan(3, 'no-such-node'), scan(4, mine)]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      token: 'token-0002',
      acked_seq: 0,
      scans_acked: 2,
      scans_refused: [
        { id: `${site.site_id}/${site.incarnation}:2`, node_id: theirs, reason: 'node_of_another_organization' },
        { id: `${site.site_id}/${site.incarnation}:3`, node_id: 'no-such-node', reason: 'unknown_node' },
      ],
    });
    const count = (id: string) => remote.running.db.prepare('SELECT COUNT(*) FROM scan_events WHERE node_id = ?').pluck().get(id);
    expect(count(mine)).toBe(2);
    expect(count(theirs)).toBe(0);
    const theirNode = (await asOther('GET', '/nodes')).body.data[0];
    expect(theirNode.scan_count).toBe(0);

    // The same scans again (a lost answer): the stored ones count as stored, the refused stay refused.
    const again = await push('token-0002', 'token-0003', [scan(1, mine), scan(2, theirs)]);
    expect(again.body.data).toMatchObject({ scans_acked: 1, scans_refused: [{ reason: 'node_of_another_organization' }] });
    expect(count(mine)).toBe(2);
  });
});
