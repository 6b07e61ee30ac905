import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../support/receiver.ts';
import { type ApiResponse, type TestServer, apiRequest, startTestServer } from '../support/server.ts';
import { unlimitedApi } from './helpers.ts';

describe('webhooks API', () => {
  let server: TestServer;
  let receiver: Receiver;
  let api: (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
  beforeAll(async () => {
    server = await startTestServer();
    api = await unlimitedApi(server);
    receiver = await new Receiver().listen();
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  it('creates a webhook, shows the whsec_ secret only once, reads, lists, updates and deletes it', async () => {
    const created = await api('POST', '/webhooks', { url: receiver.url, events: ['node.created', 'node.created', 'batch.completed'], description: 'ERP' });
    expect(created.status).toBe(201);
    const hook = created.body.data;
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(hook).toMatchObject({ url: receiver.url, events: ['node.created', 'batch.completed'], description: 'ERP', active: true, disabled: null, failing_since: null });
    expect(hook.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const got = await api('GET', `/webhooks/${hook.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data.secret).toBeUndefined();
    expect(got.body.data).toEqual(Object.fromEntries(Object.entries(hook).filter(([k]) => k !== 'secret')));

    const list = await api('GET', '/webhooks');
    expect(list.body.total).toBeGreaterThanOrEqual(1);
    expect(list.body.data[0].id).toBe(hook.id);
    expect(list.body.data.every((w: Record<string, unknown>) => !('secret' in w))).toBe(true);

    const patched = await api('PATCH', `/webhooks/${hook.id}`, { events: ['node.scanned'], active: false, description: null });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ events: ['node.scanned'], active: false, description: null });

    const deleted = await api('DELETE', `/webhooks/${hook.id}`);
    expect(deleted.body).toEqual({ data: { deleted: true, id: hook.id } });
    expect(await api('GET', `/webhooks/${hook.id}`)).toMatchObject({ status: 404, body: { data: null, error: 'Webhook not found' } });
  });

  it('answers 422 with details for bad input and 400 for a body that is not JSON', async () => {
    const cases: Array<[unknown, string]> = [
      [{ events: ['node.created'] }, 'url'],
      [{ url: 'ftp://example.com/hook', events: ['node.created'] }, 'url'],
      [{ url: 'javascript:alert(1)', events: ['node.created'] }, 'url'],
      [{ url: 'not a url', events: ['node.created'] }, 'url'],
      [{ url: receiver.url }, 'events'],
      [{ url: receiver.url, events: [] }, 'events'],
      [{ url: receiver.url, events: ['node.exploded'] }, 'events.0'],
      [{ url: receiver.url, events: 'node.created' }, 'events'],
      [{ url: receiver.url, events: ['node.created'], active: 'yes' }, 'active'],
      [{ url: receiver.url, events: ['node.created'], secret: 'whsec_mine' }, 'secret'],
      [{ url: receiver.url, events: ['node.created'], description: 'x'.repeat(501) }, 'description'],
    ];
    for (const [body, field] of cases) {
      const res = await api('POST', '/webhooks', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error).toBe('Validation failed');
      expect(res.body.data).toBeNull();
      expect(Object.keys(res.body.details), JSON.stringify(body)).toContain(field);
    }
    expect((await api('POST', '/webhooks', { url: receiver.url, events: ['nope'] })).body.details['events.0']).toMatch(/must be one of: batch\.completed/);

    const hook = (await api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] })).body.data;
    const patch = await api('PATCH', `/webhooks/${hook.id}`, { url: 'mailto:a@b.c' });
    expect(patch.status).toBe(422);
    expect(patch.body.details).toHaveProperty('url');
    expect((await api('POST', '/webhooks', '{"url":')).status).toBe(400);
    expect((await api('POST', '/webhooks', '[1]')).status).toBe(400);
    expect((await api('GET', `/webhooks/${hook.id}/deliveries?limit=0`)).status).toBe(422);
    expect((await api('GET', `/webhooks/${hook.id}/deliveries?status=lost`)).status).toBe(422);
  });

  it("hides another organization's webhooks behind 404 Webhook not found", async () => {
    const mine = (await api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] })).body.data;
    const other = await server.running.app.services.keys.createOrgWithKey('Other org', 'k');
    const as = (method: string, path: string, body?: unknown) => apiRequest(server.url, method, path, body, other.apiKey);
    for (const [method, path, body] of [
      ['GET', `/webhooks/${mine.id}`],
      ['PATCH', `/webhooks/${mine.id}`, { active: false }],
      ['DELETE', `/webhooks/${mine.id}`],
      ['POST', `/webhooks/${mine.id}/rotate-secret`],
      ['POST', `/webhooks/${mine.id}/test`],
      ['GET', `/webhooks/${mine.id}/deliveries`],
    ] as Array<[string, string, unknown?]>) {
      const res = await as(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual({ data: null, error: 'Webhook not found' });
    }
    expect((await as('GET', '/webhooks')).body.data.find((w: { id: string }) => w.id === mine.id)).toBeUndefined();
    expect((await api('GET', `/webhooks/${mine.id}`)).status).toBe(200);
    expect((await api('GET', `/webhooks/${mine.id}/deliveries/msg_nope`)).body).toEqual({ data: null, error: 'Delivery not found' });
  });

  it('rotates the secret: both the old and the new secret sign for 24 hours', async () => {
    const created = (await api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] })).body.data;
    const rotated = await api('POST', `/webhooks/${created.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const { secret, previous_secret_expires_at } = rotated.body.data;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(created.secret);
    const hours = (Date.parse(previous_secret_expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    expect((await api('GET', `/webhooks/${created.id}`)).body.data.previous_secret_expires_at).toBe(previous_secret_expires_at);

    const before = receiver.requests.length;
    const test = await api('POST', `/webhooks/${created.id}/test`);
    expect(test.status).toBe(202);
    await receiver.waitFor((r) => r.requests.length > before, 5000, 'the test delivery');
    const req = receiver.requests[before]!;
    const headers = req.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new StandardWebhook(secret).verify(req.body, headers)).toMatchObject({ type: 'webhook.test', data: { webhook_id: created.id } });
    expect(new StandardWebhook(created.secret).verify(req.body, headers)).toMatchObject({ type: 'webhook.test' });
    expect(() => new StandardWebhook('whsec_' + Buffer.from('some other secret!').toString('base64')).verify(req.body, headers)).toThrow();
  });

  it('a test event on an inactive webhook is a 409', async () => {
    const hook = (await api('POST', '/webhooks', { url: receiver.url, events: ['node.created'], active: false })).body.data;
    expect(await api('POST', `/webhooks/${hook.id}/test`)).toMatchObject({ status: 409, body: { data: null, error: 'Webhook is not active' } });
  });

  it('exposes delivery and endpoint gauges on /metrics', async () => {
    const res = await fetch(`${server.url}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/^waymark_webhook_deliveries\{status="succeeded"\} [1-9]\d*$/m);
    expect(text).toMatch(/^waymark_webhook_endpoints\{state="active"\} [1-9]\d*$/m);
  });

  it('lists the webhook routes in the OpenAPI document', async () => {
    const doc = (await api('GET', '/v1/openapi.json')).body;
    for (const p of ['/webhooks', '/webhooks/{id}', '/webhooks/{id}/rotate-secret', '/webhooks/{id}/test', '/webhooks/{id}/deliveries', '/webhooks/{id}/deliveries/{deliveryId}/redeliver']) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });
});

describe('webhooks on a public instance (--webhooks-public-only)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ webhooks: { publicOnly: true } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses private and loopback receivers with 422 and accepts public ones', async () => {
    for (const url of [
      'http://127.0.0.1:9000/hook',
      'http://localhost/hook',
      'https://api.localhost/hook',
      'http://10.0.0.7/hook',
      'http://192.168.1.20:8080/hook',
      'http://172.20.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::127.0.0.1]/hook',
      'http://[::ffff:169.254.169.254]/latest/meta-data',
      'http://[64:ff9b::169.254.169.254]/latest/meta-data',
      'http://[2002:c0a8:101::1]/hook',
      'http://2130706433/hook',
      'http://0.0.0.0/hook',
    ]) {
      const res = await server.api('POST', '/webhooks', { url, events: ['node.created'] });
      expect(res.status, url).toBe(422);
      expect(res.body.details.url, url).toMatch(/private or loopback/);
    }
    const ok = await server.api('POST', '/webhooks', { url: 'https://hooks.example.com/waymark', events: ['node.created'] });
    expect(ok.status).toBe(201);
    expect((await server.api('PATCH', `/webhooks/${ok.body.data.id}`, { url: 'http://192.168.0.1/' })).status).toBe(422);
  });
});
