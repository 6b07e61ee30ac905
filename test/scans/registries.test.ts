/**
 * Every registered function type and rule type is served by the scan path (issue 17 item 5):
 * the test walks the registries themselves, so a type added to them is covered here without a
 * new test, and one missing from them does not compile (the type-level checks below).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import type { FunctionType } from '../../server/schemas/common.ts';
import type { RuleType } from '../../server/schemas/rules.ts';
import { functionTypes, type FunctionTypeRegistry } from '../../server/functionTypes/registry.ts';
import { ruleTypes, type RuleTypeRegistry } from '../../server/ruleTypes/registry.ts';
import { validPayloads } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// ---- type level: the registries are exhaustive -----------------------------------------------
const { traffic_split: _split, ...withoutSplit } = ruleTypes;
// @ts-expect-error a rule registry without traffic_split is not a RuleTypeRegistry
const _incompleteRules: RuleTypeRegistry = withoutSplit;
// @ts-expect-error nor is one with a type RULE_TYPES does not list
const _unknownRule: RuleTypeRegistry = { ...ruleTypes, weather_based: ruleTypes.geo_based };
const { wifi: _wifi, ...withoutWifi } = functionTypes;
// @ts-expect-error a function type registry without wifi is not a FunctionTypeRegistry
const _incompleteFunctions: FunctionTypeRegistry = withoutWifi;
// @ts-expect-error nor is one whose entry carries another type's schema
const _mismatched: FunctionTypeRegistry = { ...functionTypes, wifi: functionTypes.redirect };

// ---- runtime: each registered type through real HTTP ----------------------------------------
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const AT = '2026-11-23T10:00:00.000Z'; // a Monday

/** A complete payload per function type (a type without one does not compile). */
const payloads = validPayloads satisfies Record<FunctionType, unknown>;

/**
 * Conditions per rule type that match an iPhone scan from FR at AT, and (where the type allows a
 * deterministic miss) conditions that do not. A split rule of weight 100 takes every visitor; no
 * weight misses every visitor, so traffic_split has no miss here (rules.test.ts covers buckets).
 */
const conditions: Record<RuleType, { match: unknown; miss?: unknown }> = {
  time_based: {
    match: { timezone: 'Europe/Paris', windows: [{ days: [1], start_time: '10:30', end_time: '11:30' }] },
    miss: { timezone: 'Europe/Paris', windows: [{ days: [1], start_time: '12:00', end_time: '13:00' }] },
  },
  geo_based: { match: { countries: ['BE', 'FR'] }, miss: { countries: ['JP'] } },
  device_based: { match: { devices: ['mobile'], os: ['ios'] }, miss: { devices: ['desktop'] } },
  traffic_split: { match: { weight: 100 } },
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ clock: new ManualClock(AT), trustProxy: true, limits: 'unlimited' });
});
afterAll(async () => {
  await server?.close();
});

async function scan(path: string) {
  const res = await fetch(`${server.url}${path}`, { headers: { 'user-agent': IPHONE, 'cf-ipcountry': 'FR' }, redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

async function createNode(function_type: string, payload: unknown): Promise<{ slug: string }> {
  const res = await server.api('POST', '/nodes', { label: `registry ${function_type}`, function_type, payload });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function lastScan(slug: string): Promise<{ outcome: string; rule_id: string | null }> {
  const res = await server.api('GET', `/nodes/${slug}/scans?limit=1`);
  expect(res.status, res.text).toBe(200);
  return res.body.data[0];
}

describe('every registered function type', () => {
  const types = Object.keys(functionTypes) as FunctionType[];

  it('covers FUNCTION_TYPES', async () => {
    const { FUNCTION_TYPES } = await import('../../server/schemas/common.ts');
    expect([...types].sort()).toEqual([...FUNCTION_TYPES].sort());
  });

  it.each(types)('%s: a scan answers what the registry says and records the type', async (type) => {
    const payload = payloads[type];
    const { slug } = await createNode(type, payload);
    const expected = functionTypes[type].respond(payload as never, { contactHref: `/v/${slug}/contact.vcf` });
    const res = await scan(`/v/${slug}`);
    if (expected.kind === 'redirect') {
      expect(res.status).toBe(302);
      expect(res.location).toBe(expected.location);
    } else {
      expect(res.status).toBe(expected.rendered.status);
      expect(res.text).toBe(expected.rendered.body);
    }
    expect(await lastScan(slug)).toMatchObject({ outcome: type, rule_id: null });

    const file = await scan(`/v/${slug}/contact.vcf`);
    const contactFile = (functionTypes[type] as { contactFile?: (p: never) => { status: number; body: string } }).contactFile;
    if (contactFile) expect(file).toMatchObject({ status: 200, text: contactFile(payload as never).body });
    else expect(file.status).toBe(404);
  });

  it.each(types)('%s: a stored payload its schema refuses is "not active yet", never served', async (type) => {
    const { slug } = await createNode(type, payloads[type]);
    server.running.db.prepare("UPDATE nodes SET payload_json = json_set(payload_json, '$.unknown_field', 1) WHERE slug = ?").run(slug);
    const res = await scan(`/v/${slug}`);
    expect(res.status).toBe(404);
    expect(res.text).toContain('This code is not active yet');
    expect(await lastScan(slug)).toMatchObject({ outcome: 'inactive' });
  });
});

describe('every registered rule type', () => {
  const types = Object.keys(ruleTypes) as RuleType[];

  it('covers RULE_TYPES', async () => {
    const { RULE_TYPES } = await import('../../server/schemas/rules.ts');
    expect([...types].sort()).toEqual([...RULE_TYPES].sort());
  });

  it.each(types)('%s: a matching rule serves its own content; a missing one the node\'s', async (type) => {
    for (const [which, c] of Object.entries(conditions[type])) {
      const { slug } = await createNode('redirect', { url: 'https://example.com/node' });
      const rule = await server.api('POST', `/nodes/${slug}/rules`, { rule_type: type, conditions: c, function_type: 'redirect', payload: { url: 'https://example.com/rule' } });
      expect(rule.status, rule.text).toBe(201);
      const res = await scan(`/v/${slug}`);
      if (which === 'match') {
        expect(res.location).toBe('https://example.com/rule');
        expect(await lastScan(slug)).toMatchObject({ outcome: 'redirect', rule_id: rule.body.data.id });
      } else {
        expect(res.location).toBe('https://example.com/node');
        expect(await lastScan(slug)).toMatchObject({ outcome: 'redirect', rule_id: null });
      }
    }
  });

  it.each(types)('%s: stored conditions its schema refuses skip the rule', async (type) => {
    const { slug } = await createNode('redirect', { url: 'https://example.com/node' });
    const rule = await server.api('POST', `/nodes/${slug}/rules`, { rule_type: type, conditions: conditions[type].match, function_type: 'redirect', payload: { url: 'https://example.com/rule' } });
    expect(rule.status, rule.text).toBe(201);
    server.running.db.prepare("UPDATE rules SET conditions_json = json_set(conditions_json, '$.unknown_field', 1) WHERE id = ?").run(rule.body.data.id);
    expect((await scan(`/v/${slug}`)).location).toBe('https://example.com/node');
  });
});
