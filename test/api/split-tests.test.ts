/**
 * Split tests to act on (issue 17 item 4): per-variant scans and unique visitors in the node's
 * analytics, checked against scans made over HTTP whose variant is read from each answer, and
 * promoting a variant over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { expectError, expectInvalid } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = new ManualClock('2026-12-07T10:00:00.000Z'); // a Monday
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ clock, trustProxy: true, limits: 'unlimited' });
});
afterAll(async () => {
  await server?.close();
});

const UAS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
];

/** One visitor = one address and User-Agent (the visitor key hashes both, per day). */
interface Visitor {
  ip: string;
  ua: string;
}
const visitor = (i: number): Visitor => ({ ip: `203.0.113.${i}`, ua: UAS[i % UAS.length] as string });

async function scan(slug: string, v: Visitor): Promise<string | null> {
  const res = await fetch(`${server.url}/v/${slug}`, { headers: { 'user-agent': v.ua, 'x-forwarded-for': v.ip, 'cf-ipcountry': 'FR' }, redirect: 'manual' });
  await res.arrayBuffer();
  return res.headers.get('location');
}

async function createNode(function_type: string, payload: unknown, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await server.api('POST', '/nodes', { label: 'Split', function_type, payload, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body.data.slug;
}

async function addRule(slug: string, rule_type: string, conditions: unknown, function_type: string, payload: unknown): Promise<string> {
  const res = await server.api('POST', `/nodes/${slug}/rules`, { rule_type, conditions, function_type, payload });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

const split = (slug: string, weight: number, url: string) => addRule(slug, 'traffic_split', { weight }, 'redirect', { url });
const analytics = async (slug: string, query = 'from=2026-12-07&to=2026-12-09') => {
  const res = await server.api('GET', `/nodes/${slug}/analytics?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

describe('split-test statistics', () => {
  it('are null for a node without traffic_split rules', async () => {
    const slug = await createNode('redirect', { url: 'https://example.com/plain' });
    await addRule(slug, 'geo_based', { countries: ['FR'] }, 'redirect', { url: 'https://example.com/fr' });
    expect((await analytics(slug)).split_test).toBeNull();
  });

  it('count each variant\'s scans and unique visitors as served, from the hour the test started', async () => {
    clock.set('2026-12-07T10:15:00.000Z');
    const slug = await createNode('redirect', { url: 'https://example.com/a' });
    // Before the test: node payload scans that must not be credited to the control variant.
    for (let i = 0; i < 4; i++) expect(await scan(slug, visitor(200 + i))).toBe('https://example.com/a');

    clock.set('2026-12-07T12:30:00.000Z');
    const b = await split(slug, 30, 'https://example.com/b');
    const c = await split(slug, 20, 'https://example.com/c');
    const variantOf: Record<string, string | null> = { 'https://example.com/a': null, 'https://example.com/b': b, 'https://example.com/c': c };

    // 60 visitors, visitor i scans 1 + (i % 3) times; a bot on top (never counted).
    const expected = new Map<string | null, { scans: number; visitors: Set<string> }>([[b, { scans: 0, visitors: new Set() }], [c, { scans: 0, visitors: new Set() }], [null, { scans: 0, visitors: new Set() }]]);
    for (let i = 0; i < 60; i++) {
      const v = visitor(i);
      for (let k = 0; k <= i % 3; k++) {
        clock.advance(1000);
        const location = await scan(slug, v);
        const key = variantOf[location as string];
        expect(key, `unexpected location ${location}`).not.toBeUndefined();
        const e = expected.get(key as string | null)!;
        e.scans++;
        e.visitors.add(`${v.ip} ${v.ua}`);
      }
    }
    const res = await fetch(`${server.url}/v/${slug}`, { headers: { 'user-agent': 'curl/8.5.0', 'x-forwarded-for': '198.51.100.1' }, redirect: 'manual' });
    expect(res.status).toBe(302);
    // Every variant was served to someone (60 visitors over 30/20/50 %).
    for (const e of expected.values()) expect(e.scans).toBeGreaterThan(0);

    const data = await analytics(slug);
    expect(data.totals.scans).toBe(4 + 120);
    expect(data.split_test.since).toBe('2026-12-07T12:00:00.000Z');
    expect(data.split_test.variants).toEqual([
      { rule_id: b, weight: 30, enabled: true, function_type: 'redirect', scans: expected.get(b)!.scans, unique_visitors: expected.get(b)!.visitors.size },
      { rule_id: c, weight: 20, enabled: true, function_type: 'redirect', scans: expected.get(c)!.scans, unique_visitors: expected.get(c)!.visitors.size },
      { rule_id: null, weight: 50, enabled: true, function_type: 'redirect', scans: expected.get(null)!.scans, unique_visitors: expected.get(null)!.visitors.size },
    ]);

    // The same visitors the next day are new daily keys: unique visitors add up across days.
    clock.set('2026-12-08T09:00:00.000Z');
    let nextDayB = 0;
    for (let i = 0; i < 60; i++) if ((await scan(slug, visitor(i))) === 'https://example.com/b') nextDayB++;
    const twoDays = (await analytics(slug)).split_test.variants[0];
    expect(twoDays.unique_visitors).toBe(expected.get(b)!.visitors.size + nextDayB);
    // A range that starts after the test began counts from `from`.
    const dayTwo = (await analytics(slug, 'from=2026-12-08&to=2026-12-09')).split_test;
    expect(dayTwo.since).toBe('2026-12-08T00:00:00.000Z');
    expect(dayTwo.variants[0]).toMatchObject({ rule_id: b, scans: nextDayB, unique_visitors: nextDayB });

    // A disabled variant is still listed; the node's payload takes its share.
    expect((await server.api('PATCH', `/nodes/${slug}/rules/${c}`, { enabled: false })).status).toBe(200);
    const disabled = (await analytics(slug)).split_test.variants;
    expect(disabled.map((v: { rule_id: string | null; weight: number; enabled: boolean }) => [v.rule_id, v.weight, v.enabled])).toEqual([
      [b, 30, true],
      [c, 20, false],
      [null, 70, true],
    ]);
  });

  it('leave out the node\'s payload when the variants take every visitor', async () => {
    clock.set('2026-12-07T14:00:00.000Z');
    const slug = await createNode('redirect', { url: 'https://example.com/a' });
    await split(slug, 60, 'https://example.com/b');
    await split(slug, 40, 'https://example.com/c');
    for (let i = 0; i < 10; i++) expect(await scan(slug, visitor(i))).not.toBe('https://example.com/a');
    const variants = (await analytics(slug)).split_test.variants;
    expect(variants.map((v: { weight: number }) => v.weight)).toEqual([60, 40]);
    expect(variants.reduce((s: number, v: { scans: number }) => s + v.scans, 0)).toBe(10);
  });
});

describe('promoting a variant', () => {
  const outboxOf = (type: string) =>
    (server.running.db.prepare('SELECT data_json FROM outbox_events WHERE type = ? ORDER BY seq').pluck().all(type) as string[]).map((j) => JSON.parse(j));

  it('makes its content the node\'s payload and deletes the split rules only, with a node.updated event', async () => {
    clock.set('2026-12-07T15:00:00.000Z');
    const slug = await createNode('redirect', { url: 'https://example.com/a' });
    const geo = await addRule(slug, 'geo_based', { countries: ['JP'] }, 'redirect', { url: 'https://example.com/jp' });
    const b = await split(slug, 50, 'https://example.com/b');
    await split(slug, 50, 'https://example.com/c');
    const before = outboxOf('node.updated').length;

    const res = await server.api('POST', `/nodes/${slug}/rules/${b}/promote`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ slug, function_type: 'redirect', payload: { url: 'https://example.com/b' } });
    const rules = (await server.api('GET', `/nodes/${slug}/rules`)).body;
    expect(rules.data.map((r: { id: string }) => r.id)).toEqual([geo]);
    const events = outboxOf('node.updated').slice(before);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ slug, payload: { url: 'https://example.com/b' } });
    // Every visitor now gets the winner (the cache follows the change).
    for (let i = 0; i < 8; i++) expect(await scan(slug, visitor(i))).toBe('https://example.com/b');
    expect((await analytics(slug)).split_test).toBeNull();
  });

  it('replaces the payload exactly, and may change the node\'s function type', async () => {
    const slug = await createNode('vcard', { first_name: 'Ada', last_name: 'Lovelace', phone: '+44 20 7946 0000' });
    const same = await addRule(slug, 'traffic_split', { weight: 50 }, 'vcard', { first_name: 'Grace' });
    expect((await server.api('POST', `/nodes/${slug}/rules/${same}/promote`)).body.data.payload).toEqual({ first_name: 'Grace' });

    const other = await addRule(slug, 'traffic_split', { weight: 50 }, 'wifi', { ssid: 'Lobby', security: 'nopass' });
    const res = await server.api('POST', `/nodes/${slug}/rules/${other}/promote`);
    expect(res.body.data).toMatchObject({ function_type: 'wifi', payload: { ssid: 'Lobby', security: 'nopass' } });
    expect((await server.api('GET', `/nodes/${slug}`)).body.data.payload).toEqual({ ssid: 'Lobby', security: 'nopass' });
  });

  it('refuses rules that are not variants (409), unknown rules and nodes (404), and changes nothing when the node refuses the content (422)', async () => {
    const slug = await createNode('redirect', { url: 'https://example.com/a' });
    const geo = await addRule(slug, 'geo_based', { countries: ['FR'] }, 'redirect', { url: 'https://example.com/fr' });
    expectError(await server.api('POST', `/nodes/${slug}/rules/${geo}/promote`), 409, 'Only a split-test variant can be promoted; this is a geo_based rule');
    expectError(await server.api('POST', `/nodes/${slug}/rules/00000000-0000-4000-8000-000000000000/promote`), 404, 'Rule not found');
    expectError(await server.api('POST', '/nodes/ZZZZZZZZ/rules/x/promote'), 404, 'Node not found');

    // A template locks the type and the ssid: a variant of another type, or with another ssid, does not fit.
    const template = await server.api('POST', '/templates', { name: 'Venue', function_type: 'wifi', payload: { ssid: 'Venue', security: 'nopass' }, locked_fields: ['ssid'] });
    expect(template.status, template.text).toBe(201);
    const bound = await createNode('wifi', {}, { template_id: template.body.data.id });
    const redirect = await addRule(bound, 'traffic_split', { weight: 40 }, 'redirect', { url: 'https://example.com/x' });
    const otherSsid = await addRule(bound, 'traffic_split', { weight: 40 }, 'wifi', { ssid: 'Other', security: 'nopass' });
    expectInvalid(await server.api('POST', `/nodes/${bound}/rules/${redirect}/promote`), 'function_type', 'Locked by template', 'Locked by template');
    expectInvalid(await server.api('POST', `/nodes/${bound}/rules/${otherSsid}/promote`), 'payload.ssid', 'Locked by template', 'Locked by template');
    expect((await server.api('GET', `/nodes/${bound}/rules`)).body.total).toBe(2);
    expect((await server.api('GET', `/nodes/${bound}`)).body.data.payload).toEqual({ ssid: 'Venue', security: 'nopass' });
  });
});
