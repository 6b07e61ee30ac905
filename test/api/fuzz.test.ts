import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from '../support/fast-check.ts';
import { createNode, validPayloads, waitForBatch } from '../support/fixtures.ts';
import { type ApiResponse, type TestServer, startTestServer } from '../support/server.ts';
import { snapshotStore } from '../support/rows.ts';

// Random and hostile bodies at every write endpoint: never a 5xx, always a spec-shaped reply,
// and a rejected request leaves the stored data exactly as it was.
const RUNS = 150;

/** Keys no endpoint knows at any level: a body carrying one must be rejected. */
const neverFields = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'a.b', '$where'];
const hostileKeys = [...neverFields, 'id', 'org_id', 'slug', 'status', 'payload', 'label'];
const hostileStrings = [
  '',
  ' ',
  'x'.repeat(5000),
  "'; DROP TABLE nodes; --",
  '<script>alert(1)</script>',
  'javascript:alert(1)',
  '\u0000',
  '\ud800',
  '🙂'.repeat(50),
  '../../etc/passwd',
  '%00',
  '=cmd|\' /C calc\'!A0',
  'https://',
  'http://[::1',
  'NaN',
  '1e999',
];
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, [], {}, [[[[[]]]]], { __proto__: null }),
  fc.constantFrom(...hostileStrings),
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 3 }),
);

const put = (target: Record<string, unknown>, k: string, v: unknown) =>
  Object.defineProperty(target, k, { value: v, enumerable: true, writable: true, configurable: true });

/**
 * Hand-picked cases run before the random ones: every hostile key at the top level and inside
 * every object-valued field of the valid body (payload, conditions, base_payload …).
 */
function hostileExamples(valid: Record<string, unknown>, keys: readonly string[] = hostileKeys): string[] {
  const out: string[] = [];
  for (const k of keys) {
    for (const v of [1, {}, { url: 'javascript:alert(1)' }]) {
      out.push(JSON.stringify(put(structuredClone(valid), k, v)));
      for (const [field, inner] of Object.entries(valid)) {
        if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
          const body = structuredClone(valid);
          body[field] = put({ ...(inner as Record<string, unknown>) }, k, v);
          out.push(JSON.stringify(body));
        }
      }
    }
  }
  return out;
}

/** Bodies aimed at an endpoint: wholly random JSON, hostile objects, and one-field mutations of a valid body. */
function bodies(valid: Record<string, unknown>): fc.Arbitrary<string> {
  const fields = Object.keys(valid);
  const key = fc.oneof(
    { arbitrary: fc.constantFrom(...hostileKeys), weight: 3 },
    { arbitrary: fc.constantFrom(...fields), weight: 1 },
    { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
  );
  const mutation = fc
    .tuple(fc.constantFrom('replace', 'delete', 'add', 'nest') as fc.Arbitrary<string>, fc.constantFrom(...fields), key, hostileValue)
    .map(([op, field, k, v]) => {
      const body: Record<string, unknown> = structuredClone(valid);
      if (op === 'replace') body[field] = v;
      else if (op === 'delete') delete body[field];
      else if (op === 'add') put(body, k, v);
      else {
        const inner = body[field];
        body[field] = inner && typeof inner === 'object' && !Array.isArray(inner) ? put({ ...inner }, k, v) : v;
      }
      return JSON.stringify(body);
    });
  const hostileObject = fc
    .array(fc.tuple(key, hostileValue), { maxLength: 6 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`);
  const anyJson = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null');
  const malformed = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('{', '{"a":}', '{"a":1,}', "{'a':1}", 'NaN', '{"a":NaN}', '\u0000', '[', '{"a":"\\ud800"}', '{"a":1}{"b":2}'),
  );
  const deep = fc.integer({ min: 100, max: 5000 }).map((n) => `{"payload":${'['.repeat(n)}${']'.repeat(n)}}`);
  return fc.oneof(
    { arbitrary: mutation, weight: 5 },
    { arbitrary: hostileObject, weight: 3 },
    { arbitrary: anyJson, weight: 1 },
    { arbitrary: malformed, weight: 1 },
    { arbitrary: deep, weight: 1 },
  );
}

function expectSpecShaped(res: ApiResponse, context: string): void {
  expect(res.status, context).toBeLessThan(500);
  expect(res.body, context).toBeTypeOf('object');
  if (res.status >= 400) {
    expect(res.body.data, context).toBeNull();
    expect(res.body.error, context).toBeTypeOf('string');
    const keys = Object.keys(res.body).sort();
    expect(keys, context).toEqual(res.status === 422 ? ['data', 'details', 'error'] : ['data', 'error']);
    if (res.status === 422) {
      expect(Object.keys(res.body.details).length, context).toBeGreaterThan(0);
      for (const v of Object.values(res.body.details)) expect(v, context).toBeTypeOf('string');
    }
  } else {
    expect(res.body, context).toHaveProperty('data');
  }
}

describe('property: hostile bodies at every write endpoint', () => {
  let server: TestServer;
  const ids: { slug: string; ruleId: string; templateId: string; batchId: string; webhookId: string } = {} as never;

  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
    ids.slug = (await createNode(server, 'wifi')).slug;
    ids.ruleId = (await server.api('POST', `/nodes/${ids.slug}/rules`, { rule_type: 'traffic_split', conditions: { weight: 10 }, function_type: 'redirect', payload: validPayloads.redirect })).body.data.id;
    ids.templateId = (await server.api('POST', '/templates', { name: 'T', function_type: 'wifi', payload: { ssid: 'Venue' }, locked_fields: ['ssid'] })).body.data.id;
    await createNode(server, 'wifi', { template_id: ids.templateId, payload: { password: 'secret-password' } });
    ids.batchId = (await server.api('POST', '/batches', { label: 'B', prefix: 'FZ', quantity: 2, function_type: 'redirect' })).body.data.id;
    await waitForBatch(server, ids.batchId);
    ids.webhookId = (await server.api('POST', '/webhooks', { url: 'https://hooks.example.com/w', events: ['node.created'], active: false })).body.data.id;
    // Stop the background workers (batch generation, webhook delivery) so that nothing but the
    // request under test can change the stored data between the two snapshots.
    await server.running.app.stop();
  });
  afterAll(async () => {
    await server.close();
  });

  const endpoints: Array<{ name: string; method: string; path: () => string; valid: () => Record<string, unknown> }> = [
    { name: 'POST /nodes', method: 'POST', path: () => '/nodes', valid: () => ({ label: 'n', function_type: 'action', payload: { ...validPayloads.action }, status: 'draft' }) },
    { name: 'PATCH /nodes/{slug}', method: 'PATCH', path: () => `/nodes/${ids.slug}`, valid: () => ({ label: 'n', function_type: 'wifi', payload: { ssid: 'S', password: null, security: 'nopass' }, status: 'paused' }) },
    {
      name: 'POST /nodes/{slug}/rules',
      method: 'POST',
      path: () => `/nodes/${ids.slug}/rules`,
      valid: () => ({ rule_type: 'time_based', conditions: { timezone: 'UTC', windows: [{ days: [1], start_time: '09:00', end_time: '10:00' }] }, function_type: 'redirect', payload: { ...validPayloads.redirect }, priority: 1 }),
    },
    { name: 'PATCH /nodes/{slug}/rules/{id}', method: 'PATCH', path: () => `/nodes/${ids.slug}/rules/${ids.ruleId}`, valid: () => ({ conditions: { weight: 20 }, priority: 2, enabled: false }) },
    { name: 'POST /templates', method: 'POST', path: () => '/templates', valid: () => ({ name: 't', function_type: 'vcard', payload: { organization: 'ACME' }, locked_fields: ['organization'] }) },
    { name: 'PATCH /templates/{id}', method: 'PATCH', path: () => `/templates/${ids.templateId}`, valid: () => ({ name: 't', payload: { security: 'WPA2' }, locked_fields: ['ssid', 'security'] }) },
    { name: 'POST /batches', method: 'POST', path: () => '/batches', valid: () => ({ label: 'b', prefix: 'FZB', quantity: 1, function_type: 'redirect', base_payload: { ...validPayloads.redirect } }) },
    { name: 'PATCH /batches/{id}', method: 'PATCH', path: () => `/batches/${ids.batchId}`, valid: () => ({ label: 'b', status: 'writing' }) },
    { name: 'POST /api-keys', method: 'POST', path: () => '/api-keys', valid: () => ({ name: 'k', plan: 'developer' }) },
    { name: 'POST /webhooks', method: 'POST', path: () => '/webhooks', valid: () => ({ url: 'https://hooks.example.com/a', events: ['node.created', 'batch.completed'], description: 'd', active: false }) },
    { name: 'PATCH /webhooks/{id}', method: 'PATCH', path: () => `/webhooks/${ids.webhookId}`, valid: () => ({ url: 'https://hooks.example.com/b', events: ['node.deleted'], description: null, active: false }) },
  ];

  for (const ep of endpoints) {
    it(`${ep.name}: no 5xx, spec-shaped errors, no change to stored data on rejection`, async () => {
      await fc.assert(
        fc.asyncProperty(bodies(ep.valid()), async (body) => {
          const before = await snapshotStore(server.running.store);
          const res = await server.api(ep.method, ep.path(), body);
          expectSpecShaped(res, `${ep.name} ${body.slice(0, 200)}`);
          if (res.status >= 400) expect(await snapshotStore(server.running.store), `${ep.name} ${body.slice(0, 200)}`).toEqual(before);
        }),
        { numRuns: RUNS, examples: hostileExamples(ep.valid()).map((b) => [b] as [string]) },
      );
    });

    it(`${ep.name}: an unknown key at any level (__proto__, constructor, …) is a 422 that changes nothing`, async () => {
      for (const body of hostileExamples(ep.valid(), neverFields)) {
        const before = await snapshotStore(server.running.store);
        const res = await server.api(ep.method, ep.path(), body);
        expect(res.status, body).toBe(422);
        expectSpecShaped(res, body);
        expect(await snapshotStore(server.running.store), body).toEqual(before);
      }
    });
  }

  it('GET /nodes with random query strings: no 5xx and spec-shaped replies', async () => {
    const param = fc.oneof(fc.constantFrom('limit', 'offset', 'status', 'function_type', 'batch_id', 'q', '__proto__', 'constructor'), fc.string({ maxLength: 8 }));
    const value = fc.oneof(fc.constantFrom('0', '-1', '101', '1e3', '9'.repeat(30), '', '%', '%ZZ', 'active', 'wifi', '__proto__'), fc.string({ maxLength: 20 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(param, value), { maxLength: 4 }), async (pairs) => {
        const qs = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        const res = await server.api('GET', `/nodes?${qs}`);
        expectSpecShaped(res, qs);
      }),
      { numRuns: RUNS },
    );
  });

  it('random slugs and ids in paths: no 5xx, only a spec-shaped 404 or 400', async () => {
    const segment = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('%ZZ', '%', '..', '%2e%2e', '%00', 'oOiIlL00'));
    await fc.assert(
      fc.asyncProperty(segment, fc.constantFrom('/nodes/', '/batches/', '/templates/', '/api-keys/', '/webhooks/'), async (seg, base) => {
        // Raw when it holds an escape (to send bad ones), unless it would end the path (# ? /).
        const encoded = /%/.test(seg) && !/[#?/]/.test(seg) ? seg : encodeURIComponent(seg);
        const res = await server.api('GET', `${base}${encoded}`);
        expectSpecShaped(res, `${base}${encoded}`);
        // Nothing random names a stored row: not found, or a malformed path (bad escapes).
        expect([400, 404], `${base}${encoded}: ${res.status}`).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
  });
});
