/**
 * A scan reaches a customer's webhook: the scan path writes `node.scanned` into the outbox in the
 * scan's transaction, the webhook dispatcher delivers it. Bots are not sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Receiver } from '../support/receiver.ts';
import { unlimitedApi } from '../webhooks/helpers.ts';
import { count } from '../support/rows.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe('node.scanned webhooks', () => {
  let server: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    server = await startTestServer();
    receiver = await new Receiver().listen();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('delivers one signed node.scanned per human scan', async () => {
    const api = await unlimitedApi(server);
    const hook = (await api('POST', '/webhooks', { url: receiver.url, events: ['node.scanned'] })).body.data as { secret: string };
    const node = (await api('POST', '/nodes', { label: 'Door', function_type: 'redirect', payload: { url: 'https://example.com/door' } })).body.data as {
      id: string;
      slug: string;
    };
    const scan = (ua: string, query = '') => fetch(`${server.url}/v/${node.slug}${query}`, { redirect: 'manual', headers: { 'user-agent': ua } });
    expect((await scan('facebookexternalhit/1.1')).status).toBe(302);
    expect((await scan(IPHONE, '?nfc')).status).toBe(302);

    await receiver.waitFor((r) => r.accepted.length >= 1, 10_000, 'a node.scanned delivery');
    // Both scans were committed before their 302: the outbox holds every event there will be,
    // and once the dispatcher is idle everything in it has been delivered.
    const events = await count(server.running.store, "SELECT count(*) FROM outbox_events WHERE type = 'node.scanned'");
    expect(events).toBe(1);
    await server.running.app.services.webhookDispatcher.idle();
    expect(receiver.accepted).toHaveLength(1);
    const req = receiver.accepted[0]!;
    const body = new StandardWebhook(hook.secret).verify(req.body, req.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    expect(body.type).toBe('node.scanned');
    expect(body.data).toMatchObject({ node: { id: node.id, slug: node.slug }, device_type: 'mobile', os: 'ios', source: 'nfc_unverified', outcome: 'redirect', rule_id: null });
    expect(typeof body.data.scan_id).toBe('number');
  });
});
