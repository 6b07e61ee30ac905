import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_RE, SLUG_RE, UUID_RE, createNode, expectError, expectInvalid, validPayloads } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { count } from '../support/rows.ts';

describe('nodes: CRUD shapes and status rules', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ scanBase: 'https://w.example.com', limits: 'unlimited' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('POST /nodes answers 201 with exactly the five fields the spec names', async () => {
    const res = await server.api('POST', '/nodes', { label: 'Front door', function_type: 'redirect', payload: validPayloads.redirect });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['data']);
    const d = res.body.data;
    expect(Object.keys(d).sort()).toEqual(['function_type', 'id', 'slug', 'status', 'url']);
    expect(d.id).toMatch(UUID_RE);
    expect(d.slug).toMatch(SLUG_RE);
    expect(d.url).toBe(`https://w.example.com/v/${d.slug}`);
    expect(d.function_type).toBe('redirect');
    expect(d.status).toBe('active');
  });

  it('GET /nodes/{slug} answers the full node object', async () => {
    const { slug, id } = await createNode(server, 'vcard');
    const res = await server.api('GET', `/nodes/${slug}`);
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(Object.keys(d).sort()).toEqual(
      // …and the node limits (docs/api.md "Node limits"), additions to the spec's fields.
      ['batch_id', 'created_at', 'function_type', 'hardware_id', 'id', 'label', 'payload', 'scan_count', 'serial', 'slug', 'status', 'template_id', 'updated_at', 'url',
        'expires_at', 'max_scans', 'password_protected', 'after_limit'].sort(),
    );
    expect(d).toMatchObject({
      id,
      slug,
      label: 'vcard node',
      url: `https://w.example.com/v/${slug}`,
      function_type: 'vcard',
      payload: validPayloads.vcard,
      status: 'active',
      hardware_id: null,
      scan_count: 0,
      template_id: null,
      batch_id: null,
      serial: null,
    });
    expect(d.created_at).toMatch(ISO_RE);
    expect(d.updated_at).toMatch(ISO_RE);
  });

  it('creates a node of each of the six types and returns the payload exactly as sent', async () => {
    for (const type of Object.keys(validPayloads) as (keyof typeof validPayloads)[]) {
      const { slug, function_type } = await createNode(server, type);
      expect(function_type).toBe(type);
      const got = await server.api('GET', `/nodes/${slug}`);
      expect(got.body.data.payload).toEqual(validPayloads[type]);
    }
  });

  it('create may ask for draft, but not for any other status', async () => {
    const draft = await createNode(server, 'redirect', { status: 'draft' });
    expect(draft.status).toBe('draft');
    expect((await server.api('GET', `/nodes/${draft.slug}`)).body.data.status).toBe('draft');
    for (const status of ['paused', 'retired', 'lost', 'in_production', 'bogus']) {
      const res = await server.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: validPayloads.redirect, status });
      expectInvalid(res, 'status');
    }
  });

  it('create validates label, function_type and payload with 422 and field details', async () => {
    const missing = await server.api('POST', '/nodes', {});
    expectInvalid(missing, 'label', 'is required');
    expect(missing.body.details.function_type).toBe('is required');
    expect(missing.body.details.payload).toBe('is required');

    const badType = await server.api('POST', '/nodes', { label: 'x', function_type: 'teleport', payload: {} });
    expectInvalid(badType, 'function_type');
    for (const t of ['redirect', 'vcard', 'wifi', 'microsite', 'digital_card', 'action']) expect(badType.body.details.function_type).toContain(t);

    expectInvalid(await server.api('POST', '/nodes', { label: '   ', function_type: 'redirect', payload: validPayloads.redirect }), 'label', 'must not be empty');
    expectInvalid(await server.api('POST', '/nodes', { label: 7, function_type: 'redirect', payload: validPayloads.redirect }), 'label', 'must be a string');
    expectInvalid(await server.api('POST', '/nodes', { label: 'x'.repeat(201), function_type: 'redirect', payload: validPayloads.redirect }), 'label');
    expectInvalid(await server.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: [] }), 'payload', 'must be an object');
    expectInvalid(await server.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: validPayloads.redirect, colour: 'red' }), 'colour', 'is not a known field');
    expectInvalid(await server.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: validPayloads.redirect, template_id: 'nope' }), 'template_id');
  });

  it('PATCH returns id, slug, label, url, function_type, payload, status and updates several fields in one call', async () => {
    const { slug } = await createNode(server, 'redirect');
    const res = await server.api('PATCH', `/nodes/${slug}`, { label: 'Renamed', status: 'paused', payload: { url: 'https://example.org/' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(['function_type', 'id', 'label', 'payload', 'slug', 'status', 'url']);
    expect(res.body.data).toMatchObject({ slug, label: 'Renamed', status: 'paused', payload: { url: 'https://example.org/' } });
    const got = (await server.api('GET', `/nodes/${slug}`)).body.data;
    expect(got).toMatchObject({ label: 'Renamed', status: 'paused', payload: { url: 'https://example.org/' } });
    expect(got.updated_at >= got.created_at).toBe(true);
  });

  it('PATCH accepts only active, paused and retired as status', async () => {
    const { slug } = await createNode(server, 'redirect');
    for (const status of ['paused', 'retired', 'active']) {
      const res = await server.api('PATCH', `/nodes/${slug}`, { status });
      expect(res.status).toBe(200);
      expect(res.body.data.status).toBe(status);
    }
    for (const status of ['lost', 'draft', 'in_production', 'ACTIVE', '', null, 3]) {
      const res = await server.api('PATCH', `/nodes/${slug}`, { status, label: 'must not apply' });
      expectInvalid(res, 'status');
    }
    const got = (await server.api('GET', `/nodes/${slug}`)).body.data;
    expect(got.status).toBe('active');
    expect(got.label).toBe('redirect node');
  });

  it('POST /nodes/{slug}/lost marks the node lost; PATCH can bring it back', async () => {
    const { slug } = await createNode(server, 'redirect');
    const lost = await server.api('POST', `/nodes/${slug}/lost`);
    expect(lost.status).toBe(200);
    expect(lost.body.data.status).toBe('lost');
    expect(lost.body.data.slug).toBe(slug);
    expect((await server.api('GET', `/nodes/${slug}`)).body.data.status).toBe('lost');
    expect((await server.api('PATCH', `/nodes/${slug}`, { status: 'active' })).body.data.status).toBe('active');
    expectError(await server.api('POST', '/nodes/ZZZZZZZZ/lost'), 404, 'Node not found');
  });

  it('DELETE answers {deleted: true, slug}; the node and its rules are gone', async () => {
    const { slug } = await createNode(server, 'redirect');
    const rule = await server.api('POST', `/nodes/${slug}/rules`, {
      rule_type: 'traffic_split',
      conditions: { weight: 10 },
      function_type: 'redirect',
      payload: validPayloads.redirect,
    });
    expect(rule.status).toBe(201);
    const res = await server.api('DELETE', `/nodes/${slug.toLowerCase()}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { deleted: true, slug } });
    expectError(await server.api('GET', `/nodes/${slug}`), 404, 'Node not found');
    expectError(await server.api('DELETE', `/nodes/${slug}`), 404, 'Node not found');
    expectError(await server.api('PATCH', `/nodes/${slug}`, { label: 'x' }), 404, 'Node not found');
    expectError(await server.api('GET', `/nodes/${slug}/rules`), 404, 'Node not found');
    expect(await count(server.running.store, 'SELECT COUNT(*) AS n FROM rules WHERE id = ?', rule.body.data.id)).toBe(0);
  });

  it('unknown slugs are 404 Node not found, whatever their shape', async () => {
    for (const slug of ['ZZZZZZZZ', 'short', 'way-too-long-for-a-slug', 'ABCDU123', '%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80']) {
      expectError(await server.api('GET', `/nodes/${slug}`), 404, 'Node not found');
    }
  });
});

describe('nodes: list, filters and pagination', () => {
  let server: TestServer;
  const created: { slug: string; type: string; status: string }[] = [];
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
    // 7 redirect (2 paused), 3 wifi, 2 drafts vcard: 12 in all, created in this order.
    for (let i = 0; i < 7; i++) {
      const n = await createNode(server, 'redirect', { label: `R${i}` });
      created.push({ slug: n.slug, type: 'redirect', status: 'active' });
    }
    for (const i of [1, 4]) {
      await server.api('PATCH', `/nodes/${created[i]!.slug}`, { status: 'paused' });
      created[i]!.status = 'paused';
    }
    for (let i = 0; i < 3; i++) {
      const n = await createNode(server, 'wifi', { label: `W${i}` });
      created.push({ slug: n.slug, type: 'wifi', status: 'active' });
    }
    for (let i = 0; i < 2; i++) {
      const n = await createNode(server, 'vcard', { label: `V${i}`, status: 'draft' });
      created.push({ slug: n.slug, type: 'vcard', status: 'draft' });
    }
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists newest first with total and full node objects', async () => {
    const res = await server.api('GET', '/nodes');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'total']);
    expect(res.body.total).toBe(12);
    expect(res.body.data.map((n: { slug: string }) => n.slug)).toEqual(created.map((c) => c.slug).reverse());
    expect(res.body.data[0]).toHaveProperty('payload');
    expect(res.body.data[0]).toHaveProperty('scan_count', 0);
  });

  it('filters by status and function_type, total counts all matches', async () => {
    const paused = await server.api('GET', '/nodes?status=paused');
    expect(paused.body.total).toBe(2);
    expect(paused.body.data.map((n: { slug: string }) => n.slug).sort()).toEqual([created[1]!.slug, created[4]!.slug].sort());
    const wifi = await server.api('GET', '/nodes?function_type=wifi&limit=2');
    expect(wifi.body.total).toBe(3);
    expect(wifi.body.data).toHaveLength(2);
    for (const n of wifi.body.data) expect(n.function_type).toBe('wifi');
    const both = await server.api('GET', '/nodes?function_type=redirect&status=active');
    expect(both.body.total).toBe(5);
    const drafts = await server.api('GET', '/nodes?status=draft');
    expect(drafts.body.total).toBe(2);
    expect((await server.api('GET', '/nodes?status=lost')).body).toEqual({ data: [], total: 0 });
    expect((await server.api('GET', '/nodes?batch_id=no-such-batch')).body).toEqual({ data: [], total: 0 });
  });

  it('paginates with limit and offset without gaps or repeats', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 12; offset += 5) {
      const page = await server.api('GET', `/nodes?limit=5&offset=${offset}`);
      expect(page.body.total).toBe(12);
      expect(page.body.data.length).toBe(Math.min(5, 12 - offset));
      seen.push(...page.body.data.map((n: { slug: string }) => n.slug));
    }
    expect(seen).toEqual(created.map((c) => c.slug).reverse());
    const past = await server.api('GET', '/nodes?offset=500');
    expect(past.body).toEqual({ data: [], total: 12 });
  });

  it('q searches label, slug and serial, with % and _ taken literally', async () => {
    const byLabel = await server.api('GET', '/nodes?q=w1');
    expect(byLabel.body.data.map((n: { label: string }) => n.label)).toContain('W1');
    for (const n of byLabel.body.data) expect(`${n.label} ${n.slug}`.toUpperCase()).toContain('W1');
    expect(byLabel.body.total).toBe(byLabel.body.data.length);
    const bySlug = await server.api('GET', `/nodes?q=${created[0]!.slug.slice(1, 7).toLowerCase()}`);
    expect(bySlug.body.data.map((n: { slug: string }) => n.slug)).toContain(created[0]!.slug);
    expect((await server.api('GET', '/nodes?q=%25')).body.total).toBe(0);
    expect((await server.api('GET', '/nodes?q=_')).body.total).toBe(0);
    expect((await server.api('GET', '/nodes?q=R&status=paused')).body.total).toBe(2);
  });

  it('defaults limit to 50 and allows 1..100', async () => {
    expect((await server.api('GET', '/nodes?limit=1')).body.data).toHaveLength(1);
    expect((await server.api('GET', '/nodes?limit=100')).status).toBe(200);
  });

  it('limit outside 1..100 and other bad query values are 422 with the field named', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1&limit=2']) {
      expectInvalid(await server.api('GET', `/nodes?${q}`), 'limit');
    }
    expectInvalid(await server.api('GET', '/nodes?offset=-3'), 'offset');
    expectInvalid(await server.api('GET', '/nodes?offset=1e3'), 'offset');
    expectInvalid(await server.api('GET', '/nodes?status=gone'), 'status');
    expectInvalid(await server.api('GET', '/nodes?function_type=teleport'), 'function_type');
    expectInvalid(await server.api('GET', '/nodes?sort=label'), 'sort', 'is not a known field');
    // An empty batch_id (a client that lost its id) must not silently list every node.
    expectInvalid(await server.api('GET', '/nodes?batch_id='), 'batch_id');
  });
});
