import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_RE, UUID_RE, expectError, expectInvalid, waitForBatch } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { snapshotStore } from '../support/rows.ts';

describe('templates and locked fields', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
  });
  afterAll(async () => {
    await server.close();
  });

  const wifiTemplate = async (extra: Record<string, unknown> = {}) => {
    const res = await server.api('POST', '/templates', {
      name: 'Venue wifi',
      function_type: 'wifi',
      payload: { ssid: 'Venue', security: 'WPA2', password: 'venue-pass-1' },
      locked_fields: ['ssid', 'security'],
      ...extra,
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data as { id: string; payload: Record<string, unknown> };
  };
  const bound = async (templateId: string, payload: Record<string, unknown> = {}) => {
    const res = await server.api('POST', '/nodes', { label: 'Table', function_type: 'wifi', payload, template_id: templateId });
    expect(res.status, res.text).toBe(201);
    return res.body.data.slug as string;
  };
  const node = async (slug: string) => (await server.api('GET', `/nodes/${slug}`)).body.data;

  it('CRUD: create 201 with the stored record, get, list with total, patch, delete', async () => {
    const t = await wifiTemplate();
    expect(Object.keys(t).sort()).toEqual(['created_at', 'function_type', 'id', 'locked_fields', 'name', 'payload', 'updated_at']);
    expect(t.id).toMatch(UUID_RE);
    expect(t).toMatchObject({ name: 'Venue wifi', function_type: 'wifi', locked_fields: ['ssid', 'security'] });
    expect((t as unknown as { created_at: string }).created_at).toMatch(ISO_RE);
    expect((await server.api('GET', `/templates/${t.id}`)).body.data).toEqual(t);
    const list = await server.api('GET', '/templates?limit=1');
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].id).toBe(t.id);
    expect(list.body.total).toBeGreaterThanOrEqual(1);
    expectInvalid(await server.api('GET', '/templates?limit=0'), 'limit');
    const renamed = await server.api('PATCH', `/templates/${t.id}`, { name: 'Renamed' });
    expect(renamed.body.data.name).toBe('Renamed');
    const del = await server.api('DELETE', `/templates/${t.id}`);
    expect(del.body).toEqual({ data: { deleted: true, id: t.id } });
    expectError(await server.api('GET', `/templates/${t.id}`), 404, 'Template not found');
    expectError(await server.api('PATCH', `/templates/${t.id}`, { name: 'x' }), 404, 'Template not found');
    expectError(await server.api('DELETE', `/templates/${t.id}`), 404, 'Template not found');
  });

  it('validates the template: partial payload fields, locked_fields must be payload fields of the type', async () => {
    expect((await server.api('POST', '/templates', { name: 'p', function_type: 'vcard', payload: { organization: 'ACME' } })).status).toBe(201);
    expectInvalid(await server.api('POST', '/templates', { name: 'p', function_type: 'vcard', payload: { email: 'nope' } }), 'payload.email');
    expectInvalid(await server.api('POST', '/templates', { name: 'p', function_type: 'vcard', payload: { colour: 'x' } }), 'payload.colour');
    expectInvalid(await server.api('POST', '/templates', { name: 'p', function_type: 'vcard', payload: { constructor: 'x' } }), 'payload.constructor');
    expectInvalid(await server.api('POST', '/templates', { name: 'p', function_type: 'vcard', payload: {}, locked_fields: ['ssid'] }), 'locked_fields.0');
    expectInvalid(await server.api('POST', '/templates', { name: 'p', function_type: 'teleport', payload: {} }), 'function_type');
    expectInvalid(await server.api('POST', '/templates', { function_type: 'vcard', payload: {} }), 'name', 'is required');
  });

  it('a bound node takes the template payload as defaults', async () => {
    const t = await wifiTemplate();
    const slug = await bound(t.id);
    const n = await node(slug);
    expect(n.template_id).toBe(t.id);
    expect(n.payload).toEqual({ ssid: 'Venue', security: 'WPA2', password: 'venue-pass-1' });
    // Unlocked fields may be set by the node.
    const own = await node(await bound(t.id, { password: 'table-7-pass' }));
    expect(own.payload.password).toBe('table-7-pass');
  });

  it('a locked field sent on create with another value is 422 Locked by template; the same value is accepted', async () => {
    const t = await wifiTemplate();
    const res = await server.api('POST', '/nodes', { label: 'x', function_type: 'wifi', payload: { ssid: 'Mine' }, template_id: t.id });
    expectInvalid(res, 'payload.ssid', 'Locked by template', 'Locked by template');
    expect((await server.api('POST', '/nodes', { label: 'x', function_type: 'wifi', payload: { ssid: 'Venue' }, template_id: t.id })).status).toBe(201);
    const wrongType = await server.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: { url: 'https://a.b' }, template_id: t.id });
    expectInvalid(wrongType, 'template_id', /wifi/);
  });

  it('PATCH of a bound node: locked fields (and removing them, and the type) are 422; unlocked fields change', async () => {
    const t = await wifiTemplate();
    const slug = await bound(t.id);
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { payload: { ssid: 'Hacked' } }), 'payload.ssid', 'Locked by template', 'Locked by template');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { payload: { security: null } }), 'payload.security', 'Locked by template', 'Locked by template');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { function_type: 'redirect', payload: { url: 'https://a.b' } }), 'function_type', 'Locked by template', 'Locked by template');
    expect((await server.api('PATCH', `/nodes/${slug}`, { payload: { ssid: 'Venue', password: 'new-password' } })).status).toBe(200);
    expect((await node(slug)).payload).toEqual({ ssid: 'Venue', security: 'WPA2', password: 'new-password' });
  });

  it('changing a template\'s locked field updates every bound node; unlocked defaults do not', async () => {
    const t = await wifiTemplate();
    const a = await bound(t.id);
    const b = await bound(t.id, { password: 'b-own-password' });
    const res = await server.api('PATCH', `/templates/${t.id}`, { payload: { ssid: 'Venue-5G', password: 'template-new-pw' } });
    expect(res.status).toBe(200);
    expect((await node(a)).payload).toEqual({ ssid: 'Venue-5G', security: 'WPA2', password: 'venue-pass-1' });
    expect((await node(b)).payload).toEqual({ ssid: 'Venue-5G', security: 'WPA2', password: 'b-own-password' });
    // Locking a field that was not locked pushes the template's value to the nodes.
    expect((await server.api('PATCH', `/templates/${t.id}`, { locked_fields: ['ssid', 'security', 'password'] })).status).toBe(200);
    expect((await node(b)).payload.password).toBe('template-new-pw');
    expectInvalid(await server.api('PATCH', `/nodes/${b}`, { payload: { password: 'b-again-pass' } }), 'payload.password', 'Locked by template', 'Locked by template');
  });

  it('a template change that would make a bound node invalid is 422 and changes nothing', async () => {
    const t = await wifiTemplate();
    const slug = await bound(t.id);
    const before = await snapshotStore(server.running.store);
    const res = await server.api('PATCH', `/templates/${t.id}`, { payload: { ssid: null } });
    expectInvalid(res, 'payload');
    expect(await snapshotStore(server.running.store)).toEqual(before);
    expect((await node(slug)).payload.ssid).toBe('Venue');
  });

  it('deleting a template unbinds its nodes, which keep their payload', async () => {
    const t = await wifiTemplate();
    const slug = await bound(t.id);
    expect((await server.api('DELETE', `/templates/${t.id}`)).status).toBe(200);
    const n = await node(slug);
    expect(n.template_id).toBeNull();
    expect(n.payload).toEqual({ ssid: 'Venue', security: 'WPA2', password: 'venue-pass-1' });
    expect((await server.api('PATCH', `/nodes/${slug}`, { payload: { ssid: 'Free now' } })).status).toBe(200);
    expectInvalid(await server.api('POST', '/nodes', { label: 'x', function_type: 'wifi', payload: {}, template_id: t.id }), 'template_id', 'Template not found');
  });

  it('batches bind their nodes to the template; a locked field in base_payload is 422', async () => {
    const t = await wifiTemplate();
    const bad = await server.api('POST', '/batches', { label: 'b', prefix: 'TPL', quantity: 2, function_type: 'wifi', template_id: t.id, base_payload: { ssid: 'Other' } });
    expectInvalid(bad, 'base_payload.ssid', 'Locked by template', 'Locked by template');
    const res = await server.api('POST', '/batches', { label: 'b', prefix: 'TPL', quantity: 2, function_type: 'wifi', template_id: t.id });
    expect(res.status).toBe(201);
    expect(res.body.data.template_id).toBe(t.id);
    await waitForBatch(server, res.body.data.id);
    const nodes = await server.api('GET', `/nodes?batch_id=${res.body.data.id}`);
    for (const n of nodes.body.data) {
      expect(n.template_id).toBe(t.id);
      expect(n.payload).toEqual(t.payload);
    }
    expectInvalid(
      await server.api('POST', '/batches', { label: 'b', prefix: 'TPL', quantity: 2, function_type: 'redirect', template_id: t.id }),
      'template_id',
    );
  });

  it('a locked-field change reaches unconfigured batch nodes too (they stay unconfigured, not a 422)', async () => {
    const t = (await server.api('POST', '/templates', { name: 'Partial', function_type: 'wifi', payload: { ssid: 'Venue', security: 'WPA2' }, locked_fields: ['ssid'] })).body.data;
    const b = await server.api('POST', '/batches', { label: 'b', prefix: 'UNC', quantity: 2, function_type: 'wifi', template_id: t.id });
    await waitForBatch(server, b.body.data.id);
    const configured = await bound(t.id, { password: 'configured-1' });
    const res = await server.api('PATCH', `/templates/${t.id}`, { payload: { ssid: 'Venue-2' } });
    expect(res.status, res.text).toBe(200);
    const batchNodes = (await server.api('GET', `/nodes?batch_id=${b.body.data.id}`)).body.data;
    for (const n of batchNodes) expect(n.payload).toEqual({ ssid: 'Venue-2', security: 'WPA2' });
    expect((await node(configured)).payload).toEqual({ ssid: 'Venue-2', security: 'WPA2', password: 'configured-1' });
  });
});
