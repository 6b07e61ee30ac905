import { Validator } from '@seriousme/openapi-schema-validator';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/http/openapi.ts';
import { defineRoute } from '../../server/http/route.ts';
import { ContractValidator } from '../support/contract.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function walk(value: unknown, visit: (node: Json, path: string) => void, path = ''): void {
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, visit, `${path}/${i}`));
  else if (value !== null && typeof value === 'object') {
    visit(value as Json, path);
    for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}/${k}`);
  }
}

describe('/v1/openapi.json', () => {
  let server: TestServer;
  let doc: Json;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
    doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as Json;
  });
  afterAll(async () => {
    await server.close();
  });

  const operations = () =>
    Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, op]) => ({ path, method, op: op as Json })));

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('gives every operation a unique operationId, tags and a summary', () => {
    const ids = operations().map((o) => o.op.operationId as string);
    expect(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(server.running.app.routes.length);
    for (const { op } of operations()) {
      expect(op.tags?.length, op.operationId).toBeGreaterThan(0);
      expect(op.summary, op.operationId).toBeTruthy();
    }
  });

  it("lists every tag protection as an enum: the manifest's tag_protection and the session's recent tags", () => {
    const protections = ['none', 'ntag424_sun', 'ntag21x_mirror', 'ntag21x_password', 'ntag21x_mirror_password'];
    const manifestRow = doc.components.schemas.Manifest.properties.nodes.items;
    const tagProtection = manifestRow.properties.tag_protection;
    const enums: unknown[] = [];
    walk(tagProtection, (node) => {
      if (Array.isArray(node.enum)) enums.push(node.enum);
    });
    expect(enums).toContainEqual(protections);
    const recent = doc.components.schemas.NfcSession.properties.recent.items.properties.protection;
    expect(recent.enum).toEqual(protections);
  });

  it('documents the statuses the issue found missing', () => {
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
    for (const [path, method] of [
      ['/sync/sites', 'post'],
      ['/sync/leases', 'post'],
      ['/sync/slugs/verify', 'post'],
      ['/sync/push', 'post'],
      ['/nfc/session', 'post'],
      ['/nfc/session/lost', 'post'],
      ['/nfc/session/redo', 'post'],
      ['/nfc/session/retry', 'post'],
      ['/nfc/write', 'post'],
      ['/printers', 'post'],
      ['/batches/{id}', 'patch'],
    ]) {
      expect(statuses(path!, method!), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '413']));
    }
    expect(statuses('/batches/{id}/manifest', 'get')).toContain('404');
    expect(statuses('/batches/{id}/retry', 'post')).toContain('404');
    expect(statuses('/nodes/{slug}/rules', 'get')).toContain('404');
  });

  it('types integer query parameters as integers with their bounds, and uses [0-9] rather than \\d in patterns', () => {
    const param = (path: string, name: string) => (doc.paths[path].get.parameters as Json[]).find((p) => p.name === name)!.schema;
    expect(param('/nodes', 'limit')).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
    expect(param('/nodes', 'offset')).toEqual({ type: 'integer', minimum: 0, default: 0 });
    expect(param('/nodes/{slug}/qr', 'size')).toMatchObject({ type: 'integer', minimum: 64, maximum: 4096 });
    expect(param('/nodes/{slug}/qr', 'margin')).toMatchObject({ type: 'integer', minimum: 0, maximum: 20 });
    expect(param('/nodes/{slug}/label.pdf', 'offset_x')).toMatchObject({ type: 'number', minimum: -10, maximum: 10 });
    const patterns: string[] = [];
    walk(doc, (node) => {
      if (typeof node.pattern === 'string') patterns.push(node.pattern);
    });
    expect(patterns.length).toBeGreaterThan(5);
    expect(patterns.filter((p) => p.includes('\\d'))).toEqual([]);
    // No query or path parameter is a string of digits any more.
    for (const { op } of operations()) {
      for (const p of (op.parameters ?? []) as Json[]) expect(p.schema.pattern, `${op.operationId} ${p.name}`).not.toBe('^[0-9]+$');
    }
  });

  it('says where an empty string is refused', () => {
    const schemas = doc.components.schemas as Json;
    const label = schemas.CreateRedirectNodeBody.oneOf[0].properties.label;
    expect(label).toMatchObject({ minLength: 1, pattern: '\\S' });
    expect(schemas.CreatePrinterBody.properties.name).toMatchObject({ minLength: 1 });
    expect(schemas.RedirectPayload.properties.url).toMatchObject({ pattern: expect.stringMatching(/^\^/) });
    const from = (doc.paths['/analytics'].get.parameters as Json[]).find((p) => p.name === 'from')!.schema;
    expect(from.pattern).toMatch(/^\^\[0-9\]\{4\}/);
  });

  it('names the six payloads and four conditions and selects them by function_type / rule_type on the create bodies', () => {
    const schemas = doc.components.schemas as Json;
    for (const name of ['RedirectPayload', 'VcardPayload', 'WifiPayload', 'MicrositePayload', 'DigitalCardPayload', 'ActionPayload', 'TimeConditions', 'GeoConditions', 'DeviceConditions', 'SplitConditions']) {
      expect(schemas[name], name).toBeDefined();
    }
    const node = schemas.CreateNodeBody;
    expect(node.discriminator.propertyName).toBe('function_type');
    expect(Object.keys(node.discriminator.mapping).sort()).toEqual(['action', 'digital_card', 'microsite', 'redirect', 'vcard', 'wifi']);
    expect(schemas.CreateWifiNodeBody.oneOf[0].properties.payload.$ref).toBe('#/components/schemas/WifiPayload');
    expect(schemas.CreateTemplateBody.discriminator.propertyName).toBe('function_type');
    expect(schemas.CreateBatchBody.discriminator.propertyName).toBe('function_type');
    const rule = JSON.stringify(schemas.CreateRuleBody);
    for (const c of ['TimeBasedRuleConditions', 'GeoBasedRuleConditions', 'DeviceBasedRuleConditions', 'TrafficSplitRuleConditions']) expect(rule).toContain(c);
    expect(schemas.GeoBasedRuleConditions.properties.conditions.$ref).toBe('#/components/schemas/GeoConditions');
    expect(doc.paths['/nodes'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateNodeBody');
  });

  it('has examples on the main operations', () => {
    for (const [path, method] of [['/nodes', 'post'], ['/nodes/{slug}/rules', 'post'], ['/batches', 'post'], ['/templates', 'post'], ['/webhooks', 'post']]) {
      expect(doc.paths[path!][method!].requestBody.content['application/json'].example, `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/nodes/{slug}'].get.responses['200'].content['application/json'].example).toBeDefined();
    expect(doc.paths['/nodes'].get.responses['200'].content['application/json'].example).toBeDefined();
  });

  it('every documented example is valid by its own schema', () => {
    const validator = new ContractValidator(doc);
    let checked = 0;
    for (const { path, method, op } of operations()) {
      const request = op.requestBody?.content?.['application/json'];
      if (request?.example !== undefined) {
        const problems = validator.check(
          { method, path: `/v1${path.replace(/\{(\w+)\}/g, 'X')}`, body: request.example },
          { status: Number(Object.keys(op.responses).find((s) => s.startsWith('2'))), headers: new Headers(), text: '' },
        );
        expect(problems.filter((p) => p.includes('accepted a body')), `${method} ${path}`).toEqual([]);
        checked++;
      }
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const example = response.content?.['application/json']?.example;
        if (example === undefined) continue;
        const headers = new Headers({ 'content-type': 'application/json', 'x-request-id': crypto.randomUUID(), 'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' });
        expect(validator.check({ method, path: `/v1${path.replace(/\{(\w+)\}/g, 'X')}` }, { status: Number(status), headers, text: JSON.stringify(example) }), `${method} ${path} ${status}`).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(7);
  });
});

describe('the contract validator', () => {
  // A one-route document, so that each kind of departure is seen to fail.
  const doc = buildOpenApiDocument(
    [
      defineRoute({
        method: 'post',
        path: '/things/{id}',
        operationId: 'makeThing',
        summary: 'test',
        tags: ['Test'],
        params: z.object({ id: z.string() }),
        query: z.strictObject({ n: z.string().optional() }),
        body: z.strictObject({ name: z.string().min(1) }),
        responses: { 201: { description: 'Created', schema: z.object({ id: z.string() }) } },
        handler: () => undefined,
      }),
    ],
    'test',
  ) as Json;
  const validator = new ContractValidator(doc);
  const okHeaders = () => new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': crypto.randomUUID(), 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '100' });
  const request = { method: 'POST', path: '/v1/things/a1', body: { name: 'x' } };

  it('accepts a conforming exchange', () => {
    expect(validator.check(request, { status: 201, headers: okHeaders(), text: '{"data":{"id":"a1"}}' })).toEqual([]);
  });

  it('refuses an undocumented status, a wrong shape, a wrong content type and a missing header', () => {
    expect(validator.check(request, { status: 200, headers: okHeaders(), text: '{"data":{"id":"a1"}}' }).join()).toMatch(/status 200 is not documented/);
    expect(validator.check(request, { status: 201, headers: okHeaders(), text: '{"data":{"id":1}}' }).join()).toMatch(/does not match/);
    expect(validator.check(request, { status: 201, headers: okHeaders(), text: '{"data":{"id":"a1","extra":true}}' }).join()).toMatch(/does not match/);
    const csv = okHeaders();
    csv.set('content-type', 'text/csv');
    expect(validator.check(request, { status: 201, headers: csv, text: 'a,b' }).join()).toMatch(/content type text\/csv is not documented/);
    const noId = okHeaders();
    noId.delete('x-request-id');
    expect(validator.check(request, { status: 201, headers: noId, text: '{"data":{"id":"a1"}}' }).join()).toMatch(/X-Request-Id is documented as required but missing/);
    expect(validator.check(request, { status: 422, headers: okHeaders(), text: '{"data":null}' }).join()).toMatch(/does not match/);
    expect(validator.check({ method: 'GET', path: '/v1/things/a1' }, { status: 200, headers: okHeaders(), text: '{}' }).join()).toMatch(/no such operation/);
  });

  it('refuses a request the server accepted that the document forbids', () => {
    const ok = { status: 201, headers: okHeaders(), text: '{"data":{"id":"a1"}}' };
    expect(validator.check({ ...request, body: { name: '' } }, ok).join()).toMatch(/accepted a body the document refuses/);
    expect(validator.check({ ...request, path: '/v1/things/a1?m=1' }, ok).join()).toMatch(/query parameter m, which is not documented/);
  });
});
