import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../support/server.ts';

describe('API smoke', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('creates, reads and deletes a node over real HTTP', async () => {
    const created = await server.api('POST', '/nodes', { label: 'Door', function_type: 'redirect', payload: { url: 'https://example.com' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body.data).sort()).toEqual(['function_type', 'id', 'slug', 'status', 'url']);
    const { slug } = created.body.data;
    expect(slug).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
    const got = await server.api('GET', `/nodes/${slug.toLowerCase()}`);
    expect(got.status).toBe(200);
    expect(got.body.data.payload).toEqual({ url: 'https://example.com' });
    const deleted = await server.api('DELETE', `/nodes/${slug}`);
    expect(deleted.body).toEqual({ data: { deleted: true, slug } });
    expect((await server.api('GET', `/nodes/${slug}`)).body).toEqual({ data: null, error: 'Node not found' });
  });

  it('answers 401 with the spec text without a key', async () => {
    const res = await server.api('GET', '/nodes', undefined, null);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ data: null, error: 'Invalid or missing API key' });
  });
});

describe('operational endpoints', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('serves /healthz and Prometheus /metrics', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await server.api('POST', '/nodes', { label: 'M', function_type: 'redirect', payload: { url: 'https://m.example' } });
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toMatch(/^waymark_nodes 1$/m);
    expect(text).toMatch(/^waymark_build_info\{version="\d+\.\d+\.\d+"\} 1$/m);
  });
});
