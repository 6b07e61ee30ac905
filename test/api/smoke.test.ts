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
