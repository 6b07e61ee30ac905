/**
 * NTAG 424 DNA tap proofs at scan time (issue 16 item 2), end to end on a real server: SUN URLs
 * made with the crypto a real tag uses (server/features/nfc/ntag424) for a tag keyed from the
 * organization's master key. Runs on SQLite and, in the postgres project, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { sunQueryFor } from '../../server/features/nfc/index.ts';
import { NTAG424_KIND } from '../../server/features/tapproofs/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Receiver } from '../support/receiver.ts';
import { unlimitedApi } from '../webhooks/helpers.ts';
import { rows } from '../support/rows.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const MASTER = Buffer.from('5f0e7a1c93b24d68a1c0ffee12345678', 'hex');
const OTHER_MASTER = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
const UID = Buffer.from('04A1B2C3D4E5F6', 'hex');
const DESTINATION = 'https://example.com/secret-door';

describe('tap proofs (NTAG 424 DNA SUN) at scan time', () => {
  let server: TestServer;
  let receiver: Receiver;
  let api: Awaited<ReturnType<typeof unlimitedApi>>;
  let node: { id: string; slug: string };
  let hookSecret: string;

  const tapUrl = (counter: number, master = MASTER, uid = UID) => {
    const q = sunQueryFor(master, { uid, readCounter: counter });
    return `/v/${node.slug}?picc=${q.picc}&cmac=${q.cmac}`;
  };
  const scan = (path: string) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } });
  const sources = async () =>
    (await rows<{ source: string }>(server.running.store, 'SELECT source FROM scan_events WHERE node_id = ? ORDER BY id', node.id)).map((r) => r.source);

  beforeAll(async () => {
    server = await startTestServer();
    receiver = await new Receiver().listen();
    api = await unlimitedApi(server);
    node = (await api('POST', '/nodes', { label: 'Door', function_type: 'redirect', payload: { url: DESTINATION } })).body.data;
    hookSecret = (await api('POST', '/webhooks', { url: receiver.url, events: ['node.tap_unverified'] })).body.data.secret;
    const { tapProofKeys, tapProofs } = server.running.app.services;
    tapProofKeys.import(NTAG424_KIND, server.orgId, 1, MASTER);
    await tapProofs.registerTag(server.running.store.db, { org_id: server.orgId, node_id: node.id, kind: NTAG424_KIND, uid: UID.toString('hex'), key_version: 1 });
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('verifies N taps; refuses a replayed URL, a tampered CMAC and a tag keyed by another master key', async () => {
    for (let counter = 1; counter <= 5; counter++) {
      const res = await scan(tapUrl(counter));
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(DESTINATION);
    }
    expect(await sources()).toEqual(Array(5).fill('nfc_verified'));

    // Policy 'serve' (the default): served as usual, recorded as unverified.
    expect((await scan(tapUrl(3))).status).toBe(302); // replayed (counter 3 < 5)
    expect((await scan(tapUrl(5))).status).toBe(302); // replayed (equal)
    const tampered = tapUrl(6).replace(/cmac=([0-9A-F])/, (_m, c: string) => `cmac=${c === '0' ? '1' : '0'}`);
    expect((await scan(tampered)).status).toBe(302);
    expect((await scan(tapUrl(7, OTHER_MASTER))).status).toBe(302);
    expect((await scan(`/v/${node.slug}?nfc`)).status).toBe(302);
    expect((await scan(`/v/${node.slug}`)).status).toBe(302);
    expect((await sources()).slice(5)).toEqual(['nfc_unverified', 'nfc_unverified', 'nfc_unverified', 'nfc_unverified', 'nfc_unverified', 'qr']);

    // The refused URLs did not move the counter: the next genuine tap (6) still verifies.
    expect((await scan(tapUrl(6))).status).toBe(302);
    expect((await sources()).at(-1)).toBe('nfc_verified');
    const tags = (await api('GET', `/nodes/${node.slug}/tap-proof`)).body.data;
    expect(tags).toEqual({ policy: 'serve', tags: [{ uid: '04A1B2C3D4E5F6', kind: 'ntag424', key_version: 1, last_counter: 6 }] });
  });

  it("sends node.tap_unverified for failed proofs, with the reason and no key material", async () => {
    await receiver.waitFor((r) => r.accepted.length >= 4, 15_000, 'four node.tap_unverified deliveries');
    const events = receiver.accepted.map((req) => new StandardWebhook(hookSecret).verify(req.body, req.headers as Record<string, string>) as { type: string; data: Record<string, unknown> });
    expect(events.every((e) => e.type === 'node.tap_unverified')).toBe(true);
    const reasons = events.map((e) => e.data.reason);
    expect(reasons.slice(0, 4)).toEqual(['replayed', 'replayed', 'bad_mac', 'undecryptable']);
    expect(events[0]!.data).toMatchObject({ node: { id: node.id, slug: node.slug }, kind: 'ntag424', uid: '04A1B2C3D4E5F6', counter: 3 });
    expect(JSON.stringify(events)).not.toContain(MASTER.toString('hex'));
  });

  it("policy 'refuse': an unverified tag URL gets the \"could not be verified\" page, nothing of the content", async () => {
    const put = await api('PUT', `/nodes/${node.slug}/tap-proof`, { policy: 'refuse' });
    expect(put.status).toBe(200);
    expect(put.body.data.policy).toBe('refuse');
    const refused = await scan(tapUrl(2));
    expect(refused.status).toBe(403);
    expect(refused.headers.get('location')).toBeNull();
    const page = await refused.text();
    expect(page).toContain('This tag could not be verified');
    expect(page).not.toContain('example.com');
    // A genuine tap still opens, and a plain QR scan is not a tag URL: both served.
    expect((await scan(tapUrl(7))).status).toBe(302);
    expect((await scan(`/v/${node.slug}`)).status).toBe(302);
    const outcomes = await rows<{ source: string; outcome: string }>(server.running.store, 'SELECT source, outcome FROM scan_events WHERE node_id = ? ORDER BY id DESC LIMIT 3', node.id);
    expect(outcomes).toEqual([
      { source: 'qr', outcome: 'redirect' },
      { source: 'nfc_verified', outcome: 'redirect' },
      { source: 'nfc_unverified', outcome: 'unverified' },
    ]);
    expect((await api('PUT', `/nodes/${node.slug}/tap-proof`, { policy: 'maybe' })).status).toBe(422);
  });

  it('analytics break down by source, and the scan list names it', async () => {
    const analytics = (await api('GET', `/nodes/${node.slug}/analytics`)).body.data;
    const bySource = Object.fromEntries((analytics.breakdowns.source as { value: string; scans: number }[]).map((b) => [b.value, b.scans]));
    expect(bySource).toEqual({ nfc_verified: 7, nfc_unverified: 6, qr: 2 });
    const list = (await api('GET', `/nodes/${node.slug}/scans?limit=1`)).body.data;
    expect(list[0].source).toBe('qr');
  });
});
