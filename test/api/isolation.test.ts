import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNode, expectError, expectInvalid, validPayloads, waitForBatch } from '../support/fixtures.ts';
import { type TestServer, UNLIMITED, startTestServer } from '../support/server.ts';
import { snapshotStore } from '../support/rows.ts';
import { Receiver, eventually } from '../support/receiver.ts';

// Another organization's resource is a 404 (never a 403), and never shows in lists.
describe('organization isolation', () => {
  let server: TestServer;
  let otherKey: string;
  let receiver: Receiver;
  const a: { slug: string; ruleId: string; templateId: string; batchId: string; keyId: string; printerId: string; webhookId: string; deliveryId: string } = {} as never;

  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
    const keys = server.running.app.services.keys;
    const other = await keys.createOrgWithKey('Other org', 'first');
    otherKey = (await keys.createKey(other.org.id, 'other unlimited', 'enterprise', UNLIMITED)).apiKey;

    a.slug = (await createNode(server, 'wifi')).slug;
    a.ruleId = (await server.api('POST', `/nodes/${a.slug}/rules`, { rule_type: 'geo_based', conditions: { countries: ['FR'] }, function_type: 'redirect', payload: validPayloads.redirect })).body.data.id;
    a.templateId = (await server.api('POST', '/templates', { name: 'T', function_type: 'redirect', payload: validPayloads.redirect })).body.data.id;
    a.batchId = (await server.api('POST', '/batches', { label: 'B', prefix: 'ISO', quantity: 2, function_type: 'redirect' })).body.data.id;
    await waitForBatch(server, a.batchId);
    a.keyId = (await server.api('POST', '/api-keys', { name: 'A second key' })).body.data.id;
    a.printerId = (await server.api('POST', '/printers', { name: 'A printer', offset_x: 1 })).body.data.id;
    receiver = await new Receiver().listen();
    // Subscribed to an event nothing here causes: its one delivery is the test send, settled before any snapshot.
    a.webhookId = (await server.api('POST', '/webhooks', { url: receiver.url, events: ['node.deleted'] })).body.data.id;
    a.deliveryId = (await server.api('POST', `/webhooks/${a.webhookId}/test`)).body.data.id;
    await eventually(async () => ((await server.api('GET', `/webhooks/${a.webhookId}/deliveries/${a.deliveryId}`)).body.data.status === 'succeeded' ? true : undefined), 15_000, 'A\'s test delivery succeeded');
    // Scans of A's node, so that A's analytics and CSV have rows B must not see.
    // (A phone's user agent: a bot's scans are left out of analytics and the scan list.)
    const phone = { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1' };
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/v/${a.slug}`, { headers: phone, redirect: 'manual' })).status).toBeLessThan(400);
    await eventually(async () => ((await server.api('GET', `/nodes/${a.slug}/scans`)).body.total === 3 ? true : undefined), 15_000, 'A\'s three scans recorded');
  });
  afterAll(async () => {
    await server.close();
    await receiver?.close();
  });

  const asOther = (method: string, path: string, body?: unknown) => server.api(method, path, body, otherKey);

  it('every single-resource call on another organization\'s data is a 404 and changes nothing', async () => {
    const before = await snapshotStore(server.running.store);
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', `/nodes/${a.slug}`, undefined, 'Node not found'],
      ['PATCH', `/nodes/${a.slug}`, { label: 'mine' }, 'Node not found'],
      ['DELETE', `/nodes/${a.slug}`, undefined, 'Node not found'],
      ['POST', `/nodes/${a.slug}/lost`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/rules`, undefined, 'Node not found'],
      ['POST', `/nodes/${a.slug}/rules`, { rule_type: 'traffic_split', conditions: { weight: 5 }, function_type: 'redirect', payload: validPayloads.redirect }, 'Node not found'],
      ['GET', `/nodes/${a.slug}/rules/${a.ruleId}`, undefined, 'Node not found'],
      ['PATCH', `/nodes/${a.slug}/rules/${a.ruleId}`, { enabled: false }, 'Node not found'],
      ['DELETE', `/nodes/${a.slug}/rules/${a.ruleId}`, undefined, 'Node not found'],
      ['GET', `/templates/${a.templateId}`, undefined, 'Template not found'],
      ['PATCH', `/templates/${a.templateId}`, { name: 'mine' }, 'Template not found'],
      ['DELETE', `/templates/${a.templateId}`, undefined, 'Template not found'],
      ['GET', `/batches/${a.batchId}`, undefined, 'Batch not found'],
      ['PATCH', `/batches/${a.batchId}`, { status: 'deployed' }, 'Batch not found'],
      ['POST', `/batches/${a.batchId}/retry`, undefined, 'Batch not found'],
      ['GET', `/batches/${a.batchId}/manifest`, undefined, 'Batch not found'],
      ['GET', `/batches/${a.batchId}/manifest?format=csv`, undefined, 'Batch not found'],
      ['DELETE', `/api-keys/${a.keyId}`, undefined, 'API key not found'],
      ['GET', `/nodes/${a.slug}/analytics`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/scans`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/scans?format=csv`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/qr`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/qr?format=svg`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/qr?format=png`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/label.pdf`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/label.pdf?allow_local_scan_base=true`, undefined, 'Node not found'],
      ['GET', `/nodes/${a.slug}/label.svg`, undefined, 'Node not found'],
      ['GET', `/batches/${a.batchId}/preview.svg`, undefined, 'Batch not found'],
      ['GET', `/batches/${a.batchId}/manifest?format=pdf`, undefined, 'Batch not found'],
      ['GET', `/printers/${a.printerId}`, undefined, 'Not found'],
      ['PATCH', `/printers/${a.printerId}`, { offset_x: 5 }, 'Not found'],
      ['DELETE', `/printers/${a.printerId}`, undefined, 'Not found'],
      ['GET', `/webhooks/${a.webhookId}`, undefined, 'Webhook not found'],
      ['PATCH', `/webhooks/${a.webhookId}`, { active: false }, 'Webhook not found'],
      ['POST', `/webhooks/${a.webhookId}/test`, undefined, 'Webhook not found'],
      ['POST', `/webhooks/${a.webhookId}/rotate-secret`, undefined, 'Webhook not found'],
      ['GET', `/webhooks/${a.webhookId}/deliveries`, undefined, 'Webhook not found'],
      ['GET', `/webhooks/${a.webhookId}/deliveries/${a.deliveryId}`, undefined, 'Webhook not found'],
      ['POST', `/webhooks/${a.webhookId}/deliveries/${a.deliveryId}/redeliver`, undefined, 'Webhook not found'],
      ['DELETE', `/webhooks/${a.webhookId}`, undefined, 'Webhook not found'],
    ];
    for (const [method, path, body, error] of cases) {
      expectError(await asOther(method, path, body), 404, error);
    }
    // A rule id of org A under a node of org B is not found either.
    const own = (await createNode({ api: asOther })).slug;
    expectError(await asOther('GET', `/nodes/${own}/rules/${a.ruleId}`), 404, 'Rule not found');
    const after = await snapshotStore(server.running.store);
    // Only B's own node (and its outbox event and slug) were added.
    expect(after.nodes!.length).toBe(before.nodes!.length + 1);
    expect(after.rules).toEqual(before.rules);
    expect(after.templates).toEqual(before.templates);
    expect(after.batches).toEqual(before.batches);
    expect(after.api_keys).toEqual(before.api_keys);
    expect(after.nodes!.filter((n) => (n as { slug: string }).slug !== own)).toEqual(before.nodes);
    expect(after.printer_profiles).toEqual(before.printer_profiles);
    expect(after.webhooks).toEqual(before.webhooks);
    expect(after.scan_events).toEqual(before.scan_events);
    // Nothing was sent again: A's receiver got its one test delivery only.
    expect(after.webhook_deliveries).toEqual(before.webhook_deliveries);
    expect(after.webhook_attempts).toEqual(before.webhook_attempts);
    expect(receiver.requests).toHaveLength(1);
  });

  it('another organization\'s delivery under one\'s own webhook, or printer in one\'s own print, is not found', async () => {
    const own = (await createNode({ api: asOther })).slug;
    const hook = (await asOther('POST', '/webhooks', { url: receiver.url, events: ['node.deleted'] })).body.data.id;
    expectError(await asOther('GET', `/webhooks/${hook}/deliveries/${a.deliveryId}`), 404, 'Delivery not found');
    expectError(await asOther('POST', `/webhooks/${hook}/deliveries/${a.deliveryId}/redeliver`), 404, 'Delivery not found');
    expect((await asOther('GET', `/webhooks/${hook}/deliveries`)).body).toEqual({ data: [], total: 0 });
    expectInvalid(await asOther('GET', `/nodes/${own}/label.pdf?allow_local_scan_base=true&printer=${a.printerId}`), 'printer', 'Printer not found');
    expectInvalid(await asOther('GET', `/nodes/${own}/label.svg?printer=${a.printerId}`), 'printer', 'Printer not found');
  });

  it('lists show only the caller\'s organization', async () => {
    const nodes = await asOther('GET', '/nodes?limit=100');
    expect(nodes.body.data.map((n: { slug: string }) => n.slug)).not.toContain(a.slug);
    for (const n of nodes.body.data) expect(n.batch_id).not.toBe(a.batchId);
    expect((await asOther('GET', `/nodes?batch_id=${a.batchId}`)).body).toEqual({ data: [], total: 0 });
    expect((await asOther('GET', '/batches')).body).toEqual({ data: [], total: 0 });
    expect((await asOther('GET', '/templates')).body).toEqual({ data: [], total: 0 });
    const keys = (await asOther('GET', '/api-keys')).body.data.map((k: { id: string }) => k.id);
    expect(keys).not.toContain(a.keyId);
    expect(keys).toHaveLength(2);
    expect((await asOther('GET', '/printers')).body).toEqual({ data: [], total: 0 });
    const hooks = (await asOther('GET', '/webhooks')).body.data.map((w: { id: string }) => w.id);
    expect(hooks).not.toContain(a.webhookId);
    // Analytics of the organization count only its own scans and nodes.
    const analytics = (await asOther('GET', '/analytics')).body.data;
    expect(analytics.totals.scans).toBe(0);
    expect(analytics.top_nodes.map((n: { slug: string }) => n.slug)).not.toContain(a.slug);
    const mine = (await server.api('GET', '/analytics')).body.data;
    expect(mine.totals.scans).toBe(3);
    expect(mine.top_nodes.map((n: { slug: string }) => n.slug)).toContain(a.slug);
    // And the owner still sees everything.
    expect((await server.api('GET', `/nodes?batch_id=${a.batchId}`)).body.total).toBe(2);
  });

  it('another organization\'s template cannot be referenced', async () => {
    expectInvalid(await asOther('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: validPayloads.redirect, template_id: a.templateId }), 'template_id', 'Template not found');
    expectInvalid(await asOther('POST', '/batches', { label: 'x', prefix: 'X', quantity: 1, function_type: 'redirect', template_id: a.templateId }), 'template_id', 'Template not found');
  });

  it('serial numbering is per organization', async () => {
    const b = await asOther('POST', '/batches', { label: 'B', prefix: 'ISO', quantity: 1, function_type: 'redirect' });
    expect(b.status).toBe(201);
    await waitForBatch({ api: asOther }, b.body.data.id);
    const nodes = await asOther('GET', `/nodes?batch_id=${b.body.data.id}`);
    expect(nodes.body.data[0].serial).toBe('ISO-001');
  });
});
