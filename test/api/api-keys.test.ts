import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_RE, expectError, expectInvalid } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { rows } from '../support/rows.ts';

describe('API keys', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('create answers 201 with the key once; the list never shows it', async () => {
    const res = await server.api('POST', '/api-keys', { name: 'CI' });
    expect(res.status).toBe(201);
    const k = res.body.data;
    expect(Object.keys(k).sort()).toEqual(['api_key', 'created_at', 'id', 'last_used_at', 'name', 'plan', 'prefix']);
    expect(k.api_key).toMatch(/^wmk_[0-9A-Za-z]{32}$/);
    expect(k).toMatchObject({ name: 'CI', plan: 'developer', last_used_at: null, prefix: k.api_key.slice(0, 8) });
    expect(k.created_at).toMatch(ISO_RE);
    const list = await server.api('GET', '/api-keys');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(list.body.data.length);
    const listed = list.body.data.find((x: { id: string }) => x.id === k.id);
    expect(Object.keys(listed).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name', 'plan', 'prefix']);
    expect(list.text).not.toContain(k.api_key);
    // Nor is it stored: only a hash.
    const stored = JSON.stringify(await rows(server.running.store, 'SELECT * FROM api_keys'));
    expect(stored).not.toContain(k.api_key);
  });

  it('the list is paged like every list: newest first, limit (default 50, at most 100) and offset', async () => {
    for (const name of ['Page A', 'Page B', 'Page C']) expect((await server.api('POST', '/api-keys', { name })).status).toBe(201);
    const all = await server.api('GET', '/api-keys');
    const page = await server.api('GET', '/api-keys?limit=2&offset=1');
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(all.body.total);
    expect(page.body.data).toEqual(all.body.data.slice(1, 3));
    expect(all.body.data.slice(0, 3).map((k: { name: string }) => k.name)).toEqual(['Page C', 'Page B', 'Page A']);
    expectInvalid(await server.api('GET', '/api-keys?limit=0'), 'limit');
  });

  it('a created key works at once and records last_used_at', async () => {
    const k = (await server.api('POST', '/api-keys', { name: 'Worker', plan: 'pro' })).body.data;
    expect(k.plan).toBe('pro');
    const res = await server.api('GET', '/nodes', undefined, k.api_key);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('500');
    const listed = (await server.api('GET', '/api-keys')).body.data.find((x: { id: string }) => x.id === k.id);
    expect(listed.last_used_at).toMatch(ISO_RE);
  });

  it('a revoked key gets 401 on the very next request and leaves the list', async () => {
    const k = (await server.api('POST', '/api-keys', { name: 'Temp' })).body.data;
    expect((await server.api('GET', '/nodes', undefined, k.api_key)).status).toBe(200);
    const del = await server.api('DELETE', `/api-keys/${k.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ data: { deleted: true, id: k.id } });
    expectError(await server.api('GET', '/nodes', undefined, k.api_key), 401, 'Invalid or missing API key');
    expectError(await server.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: { url: 'https://a.b' } }, k.api_key), 401, 'Invalid or missing API key');
    expect((await server.api('GET', '/api-keys')).body.data.map((x: { id: string }) => x.id)).not.toContain(k.id);
    expectError(await server.api('DELETE', `/api-keys/${k.id}`), 404, 'API key not found');
  });

  it('a key can revoke itself', async () => {
    const k = (await server.api('POST', '/api-keys', { name: 'Self' })).body.data;
    expect((await server.api('DELETE', `/api-keys/${k.id}`, undefined, k.api_key)).status).toBe(200);
    expectError(await server.api('GET', '/api-keys', undefined, k.api_key), 401);
  });

  it('validates the create body', async () => {
    expectInvalid(await server.api('POST', '/api-keys', {}), 'name', 'is required');
    expectInvalid(await server.api('POST', '/api-keys', { name: ' ' }), 'name');
    expectInvalid(await server.api('POST', '/api-keys', { name: 'x', plan: 'gold' }), 'plan', /developer/);
    expectInvalid(await server.api('POST', '/api-keys', { name: 'x', key: 'wmk_mine' }), 'key', 'is not a known field');
    expectError(await server.api('DELETE', '/api-keys/nope'), 404, 'API key not found');
  });

  it('401 for a missing, malformed, unknown or wrongly-schemed key', async () => {
    const bad = [undefined, 'Bearer', 'Bearer wmk_unknownunknownunknownunknownunkn', `Basic ${server.apiKey}`, `Bearer ${server.apiKey}x`, `Bearer ${'wmk_'.padEnd(200, 'a')}`];
    for (const authorization of bad) {
      const res = await fetch(`${server.url}/v1/nodes`, { headers: authorization ? { authorization } : {} });
      const body = await res.json();
      expect(res.status, authorization).toBe(401);
      expect(body).toEqual({ data: null, error: 'Invalid or missing API key' });
      // Decision: no key, no budget: 401 responses carry no X-RateLimit-* headers.
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const lower = await fetch(`${server.url}/v1/nodes`, { headers: { authorization: `bearer ${server.apiKey}` } });
    expect(lower.status).toBe(200);
  });
});

describe('API key plans', () => {
  it('a key cannot create a key of a higher plan than its own', async () => {
    const server = await startTestServer();
    try {
      const up = await server.api('POST', '/api-keys', { name: 'escalate', plan: 'enterprise' });
      expect(up.status).toBe(422);
      expect(up.body.details).toEqual({ plan: 'must not exceed the plan of the key making the request (developer)' });
      const pro = await server.api('POST', '/api-keys', { name: 'escalate', plan: 'pro' });
      expect(pro.status).toBe(422);
      const same = await server.api('POST', '/api-keys', { name: 'same', plan: 'developer' });
      expect(same.status).toBe(201);
      expect(same.body.data.plan).toBe('developer');
      const list = await server.api('GET', '/api-keys');
      expect(list.body.data.map((k: { name: string }) => k.name).sort()).toEqual(['First key', 'same']);
    } finally {
      await server.close();
    }
  });
});
