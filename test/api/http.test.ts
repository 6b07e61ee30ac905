import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp } from '../../server/http/api.ts';
import { MemoryRateLimiter } from '../../server/http/rateLimit.ts';
import { defineRoute } from '../../server/http/route.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { expectError, expectInvalid } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe('HTTP layer: body handling, errors, request ids, health, OpenAPI', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
  });
  afterAll(async () => {
    await server.close();
  });

  const raw = async (method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.apiKey}`, ...headers },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, body: json, text };
  };
  const JSON_CT = { 'content-type': 'application/json' };

  it('a NUL character (which PostgreSQL text cannot hold) is refused alike on both backends, and changes nothing', async () => {
    const path = await raw('GET', '/v1/templates/%00');
    expect(path.status).toBe(400);
    expect(path.body).toEqual({ data: null, error: 'Path parameters must not contain NUL characters' });
    const query = await raw('GET', '/v1/nodes?q=a%00b');
    expect(query.status).toBe(422);
    expect(query.body.details).toEqual({ q: 'must not contain NUL characters (\\u0000)' });
    const before = (await server.api('GET', '/nodes?limit=1')).body.total;
    const body = await raw('POST', '/v1/nodes', JSON.stringify({ label: 'a\u0000b', function_type: 'redirect', payload: { url: 'https://example.com' } }), JSON_CT);
    expect(body.status).toBe(422);
    expect(body.body.details).toEqual({ label: 'must not contain NUL characters (\\u0000)' });
    expect((await server.api('GET', '/nodes?limit=1')).body.total).toBe(before);
  });

  it('413 for a body over 64 KiB, with the spec error shape', async () => {
    const big = JSON.stringify({ label: 'x'.repeat(70 * 1024), function_type: 'redirect', payload: { url: 'https://a.b' } });
    expectError(await raw('POST', '/v1/nodes', big, JSON_CT), 413);
    // Just under the limit is read (and then judged on its fields).
    const under = JSON.stringify({ label: 'x'.repeat(60 * 1024), function_type: 'redirect', payload: { url: 'https://a.b' } });
    expectInvalid(await raw('POST', '/v1/nodes', under, JSON_CT), 'label');
  });

  it('400 for malformed JSON and for bodies that are not a JSON object', async () => {
    for (const body of ['{"label": ', '{label: "x"}', "{'a':1}", '[1,2]', '"text"', '42', 'null', 'true', '']) {
      const res = await raw('POST', '/v1/nodes', body, JSON_CT);
      expectError(res, 400);
      expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
    }
    for (const [path, method] of [['/v1/batches', 'POST'], ['/v1/templates', 'POST'], ['/v1/api-keys', 'POST']] as const) {
      expectError(await raw(method, path, '[]', JSON_CT), 400);
    }
  });

  it('null, true, a number, a string and an array all answer the same clear 400', async () => {
    for (const body of ['null', 'true', '12.5', '"text"', '[]']) {
      for (const [method, path] of [['POST', '/v1/nodes'], ['POST', '/v1/sync/sites'], ['PATCH', '/v1/batches/x']] as const) {
        const res = await raw(method, path, body, JSON_CT);
        expect(res.status, `${method} ${path} ${body}`).toBe(400);
        expect(res.body, `${method} ${path} ${body}`).toEqual({ data: null, error: 'Request body must be a JSON object' });
      }
    }
  });

  it('an endpoint without a body ignores a stray one (no 400 for what it never reads)', async () => {
    expect((await raw('POST', '/v1/sync/run', '{not json', JSON_CT)).status).toBe(200);
  });

  it('400 when a body endpoint gets no JSON content type', async () => {
    const body = JSON.stringify({ label: 'x', function_type: 'redirect', payload: { url: 'https://a.b' } });
    expectError(await raw('POST', '/v1/nodes', body, { 'content-type': 'text/plain' }), 400, /JSON/);
    expectError(await raw('POST', '/v1/nodes', body), 400);
    expectError(await raw('POST', '/v1/nodes', body, { 'content-type': 'application/json; charset=latin-9' }), 400);
  });

  it('400 for a malformed percent-encoding in the path', async () => {
    expectError(await raw('GET', '/v1/nodes/%ZZ'), 400);
    expectError(await raw('GET', '/v1/batches/%E0%A4%A'), 400);
  });

  it('404 Not found for unknown routes and methods', async () => {
    expectError(await raw('GET', '/v1/nope'), 404, 'Not found');
    expectError(await raw('PUT', '/v1/nodes', '{}', JSON_CT), 404, 'Not found');
    expectError(await raw('GET', '/nowhere'), 404, 'Not found');
  });

  it('every response carries a distinct X-Request-Id', async () => {
    const responses = [
      await raw('GET', '/healthz'),
      await raw('GET', '/v1/openapi.json'),
      await raw('GET', '/v1/nodes'),
      await raw('GET', '/v1/nodes', undefined, { authorization: 'Bearer nope' }),
      await raw('GET', '/v1/nodes/ZZZZZZZZ'),
      await raw('POST', '/v1/nodes', '{', JSON_CT),
      await raw('POST', '/v1/nodes', '{}', JSON_CT),
      await raw('POST', '/v1/nodes', 'x'.repeat(70_000), JSON_CT),
      await raw('GET', '/v1/nodes/%ZZ'),
      await raw('GET', '/elsewhere'),
    ];
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('/healthz answers 200 without a key', async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
  });

  it('/v1/openapi.json is a valid-looking OpenAPI document with every route', async () => {
    const res = await fetch(`${server.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, any>>; components: Record<string, unknown> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toBeTruthy();
    const routes = server.running.app.routes;
    expect(routes.length).toBeGreaterThanOrEqual(25);
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
      expect(Object.keys(op.responses).length).toBeGreaterThan(0);
      if (r.body) expect(op.requestBody?.content?.['application/json']?.schema, `${r.method} ${r.path} body`).toBeDefined();
      const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const documented = (op.parameters ?? []).filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name);
      expect(documented.sort()).toEqual(pathParams.sort());
    }
    // The routes the spec names are all there.
    for (const [path, method] of [['/nodes', 'post'], ['/nodes', 'get'], ['/nodes/{slug}', 'get'], ['/nodes/{slug}', 'patch'], ['/nodes/{slug}', 'delete'], ['/nodes/{slug}/rules', 'post'], ['/batches', 'post'], ['/batches', 'get'], ['/batches/{id}/manifest', 'get']]) {
      expect(doc.paths[path!]?.[method!], `${method} ${path}`).toBeDefined();
    }
    // $refs resolve.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    const schemas = (doc.components.schemas ?? {}) as Record<string, unknown>;
    for (const ref of refs) expect(schemas[ref], ref).toBeDefined();
  });

  it('422 details name nested fields with dotted paths', async () => {
    const res = await raw('POST', '/v1/nodes', JSON.stringify({ label: 'x', function_type: 'microsite', payload: { title: 'T', links: [{ label: 'a', url: 'https://a.b' }, { label: 'b', url: 'nope' }] } }), JSON_CT);
    expectInvalid(res, 'payload.links.1.url');
  });

  it('an unexpected error is a 500 Internal server error without a stack trace, logged with the request id', async () => {
    const logged: string[] = [];
    const app = createHttpApp({
      routes: [
        defineRoute({
          method: 'get',
          path: '/boom',
          operationId: 'boom',
          summary: 'fails',
          tags: ['test'],
          responses: {},
          handler: () => {
            throw new Error('secret internals at /srv/waymark/db.ts:42');
          },
        }),
      ],
      keys: server.running.app.services.keys,
      rateLimiter: new MemoryRateLimiter(systemClock),
      trustProxy: false,
      version: 'test',
      logger: { error: (m: string) => logged.push(m) },
    });
    const http = createServer((req, res) => {
      res.setHeader('X-Request-Id', 'req-123');
      app(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
    try {
      const res = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/v1/boom`, { headers: { authorization: `Bearer ${server.apiKey}` } });
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(JSON.parse(text)).toEqual({ data: null, error: 'Internal server error' });
      expect(text).not.toContain('secret');
      expect(logged.join('\n')).toContain('req-123');
    } finally {
      http.close();
    }
  });
});
