import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { ISO_RE, UUID_RE, createNode, expectError, expectInvalid, validPayloads } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const timeRule = (conditions: unknown = { timezone: 'Europe/Paris', windows: [{ days: [1, 2, 3, 4, 5], start_time: '09:00', end_time: '17:30' }] }) => ({
  rule_type: 'time_based',
  conditions,
  function_type: 'redirect',
  payload: { url: 'https://example.com/office-hours' },
});

describe('routing rules', () => {
  let server: TestServer;
  let slug: string;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
    slug = (await createNode(server)).slug;
  });
  afterAll(async () => {
    await server.close();
  });

  const post = (body: unknown, s = slug) => server.api('POST', `/nodes/${s}/rules`, body);

  it('POST answers 201 with the stored rule; priority defaults to 0 and enabled to true', async () => {
    const res = await post(timeRule());
    expect(res.status).toBe(201);
    const r = res.body.data;
    expect(Object.keys(r).sort()).toEqual(['conditions', 'created_at', 'enabled', 'function_type', 'id', 'payload', 'priority', 'rule_type', 'updated_at']);
    expect(r.id).toMatch(UUID_RE);
    expect(r).toMatchObject({ ...timeRule(), priority: 0, enabled: true });
    expect(r.created_at).toMatch(ISO_RE);
    const got = await server.api('GET', `/nodes/${slug}/rules/${r.id}`);
    expect(got.body.data).toEqual(r);
  });

  it('all four create fields are required', async () => {
    const res = await post({});
    for (const f of ['rule_type', 'conditions', 'function_type', 'payload']) expectInvalid(res, f, 'is required');
    expectInvalid(await post({ ...timeRule(), rule_type: 'moon_phase' }), 'rule_type', /time_based/);
    expectInvalid(await post({ ...timeRule(), weight: 3 }), 'weight', 'is not a known field');
  });

  it('the rule payload is validated for its function_type', async () => {
    expectInvalid(await post({ ...timeRule(), payload: { url: 'javascript:alert(1)' } }), 'payload.url');
    expectInvalid(await post({ ...timeRule(), function_type: 'wifi', payload: { ssid: 'x' } }), 'payload.password');
    expect((await post({ ...timeRule(), function_type: 'vcard', payload: validPayloads.vcard })).status).toBe(201);
  });

  it('time_based: IANA zones (UTC and links too), days 1..7, HH:MM times, overnight windows', async () => {
    for (const timezone of ['UTC', 'Asia/Calcutta', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5']) {
      expect((await post(timeRule({ timezone, windows: [{ days: [7], start_time: '22:00', end_time: '06:00' }] }))).status, timezone).toBe(201);
    }
    const w = (over: Record<string, unknown>) => timeRule({ timezone: 'UTC', windows: [{ days: [1], start_time: '09:00', end_time: '10:00', ...over }] });
    for (const timezone of ['Mars/Olympus_Mons', '', 'Europe/Paris ', '+05:00', '-0300', 42]) {
      expectInvalid(await post(timeRule({ timezone, windows: [{ days: [1], start_time: '09:00', end_time: '10:00' }] })), 'conditions.timezone');
    }
    for (const days of [[0], [8], [1.5], ['1'], []]) expectInvalid(await post(w({ days })), 'conditions.windows.0.days' + (Array.isArray(days) && days.length ? '.0' : ''));
    for (const t of ['9:00', '24:00', '12:60', '12:00:00', 'noon', '']) {
      expectInvalid(await post(w({ start_time: t })), 'conditions.windows.0.start_time');
      expectInvalid(await post(w({ end_time: t })), 'conditions.windows.0.end_time');
    }
    expectInvalid(await post(timeRule({ timezone: 'UTC', windows: [] })), 'conditions.windows');
    expectInvalid(await post(timeRule({ timezone: 'UTC' })), 'conditions.windows', 'is required');
    expectInvalid(await post(w({ extra: true })), 'conditions.windows.0.extra');
  });

  it('geo_based: a non-empty list of ISO 3166-1 alpha-2 codes', async () => {
    const geo = (countries: unknown) => ({ ...timeRule(), rule_type: 'geo_based', conditions: { countries } });
    expect((await post(geo(['FR', 'DE']))).status).toBe(201);
    expectInvalid(await post(geo([])), 'conditions.countries');
    expectInvalid(await post(geo(['fr'])), 'conditions.countries.0');
    expectInvalid(await post(geo(['FRA'])), 'conditions.countries.0');
    expectInvalid(await post(geo('FR')), 'conditions.countries');
  });

  it('device_based: devices and/or os from their lists, at least one of them', async () => {
    const dev = (conditions: unknown) => ({ ...timeRule(), rule_type: 'device_based', conditions });
    expect((await post(dev({ devices: ['mobile', 'tablet'] }))).status).toBe(201);
    expect((await post(dev({ os: ['ios', 'android'] }))).status).toBe(201);
    expect((await post(dev({ devices: ['desktop'], os: ['linux', 'macos', 'windows'] }))).status).toBe(201);
    expectInvalid(await post(dev({})), 'conditions');
    expectInvalid(await post(dev({ devices: ['phone'] })), 'conditions.devices.0');
    expectInvalid(await post(dev({ os: ['beos'] })), 'conditions.os.0');
    expectInvalid(await post(dev({ devices: [] })), 'conditions.devices');
  });

  it('traffic_split: weight 1..100 and a node\'s split weights sum to at most 100', async () => {
    const node = (await createNode(server)).slug;
    const split = (weight: unknown) => ({ ...timeRule(), rule_type: 'traffic_split', conditions: { weight } });
    for (const weight of [0, 101, 50.5, '50', -1]) expectInvalid(await post(split(weight), node), 'conditions.weight');
    const a = await post(split(60), node);
    expect(a.status).toBe(201);
    expect((await post(split(40), node)).status).toBe(201);
    expectInvalid(await post(split(1), node), 'conditions.weight', /at most 100/);
    // Lowering one weight makes room; raising it back over 100 is refused.
    expect((await server.api('PATCH', `/nodes/${node}/rules/${a.body.data.id}`, { conditions: { weight: 50 } })).status).toBe(200);
    expect((await post(split(10), node)).status).toBe(201);
    expectInvalid(await server.api('PATCH', `/nodes/${node}/rules/${a.body.data.id}`, { conditions: { weight: 51 } }), 'conditions.weight');
    // Other nodes have their own 100.
    expect((await post(split(100))).status).toBe(201);
  });

  it('list answers rules in priority order (ascending, ties by age) with total', async () => {
    const node = (await createNode(server)).slug;
    const mk = async (priority?: number) => (await post({ ...timeRule(), ...(priority === undefined ? {} : { priority }) }, node)).body.data.id as string;
    const p5 = await mk(5);
    const p0a = await mk();
    const p1 = await mk(1);
    const p0b = await mk(0);
    const list = await server.api('GET', `/nodes/${node}/rules`);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(4);
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([p0a, p0b, p1, p5]);
    const page = await server.api('GET', `/nodes/${node}/rules?limit=2&offset=1`);
    expect(page.body.total).toBe(4);
    expect(page.body.data.map((r: { id: string }) => r.id)).toEqual([p0b, p1]);
    expectInvalid(await server.api('GET', `/nodes/${node}/rules?limit=101`), 'limit', /at most 100/);
    expectInvalid(await server.api('GET', `/nodes/${node}/rules?offset=-1`), 'offset');
    expectInvalid(await post({ ...timeRule(), priority: -1 }, node), 'priority');
    expectInvalid(await post({ ...timeRule(), priority: 1.5 }, node), 'priority');
  });

  it('PATCH updates given fields and revalidates the whole rule; DELETE removes it', async () => {
    const id = (await post(timeRule())).body.data.id;
    const res = await server.api('PATCH', `/nodes/${slug}/rules/${id}`, { enabled: false, priority: 7 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, enabled: false, priority: 7, rule_type: 'time_based' });
    // Changing the type alone leaves time conditions that do not fit geo_based.
    expectInvalid(await server.api('PATCH', `/nodes/${slug}/rules/${id}`, { rule_type: 'geo_based' }), 'conditions.countries');
    const both = await server.api('PATCH', `/nodes/${slug}/rules/${id}`, { rule_type: 'geo_based', conditions: { countries: ['BE'] } });
    expect(both.body.data).toMatchObject({ rule_type: 'geo_based', conditions: { countries: ['BE'] } });
    expectInvalid(await server.api('PATCH', `/nodes/${slug}/rules/${id}`, { function_type: 'wifi' }), 'payload.ssid');
    const del = await server.api('DELETE', `/nodes/${slug}/rules/${id}`);
    expect(del.body).toEqual({ data: { deleted: true, id } });
    expectError(await server.api('GET', `/nodes/${slug}/rules/${id}`), 404, 'Rule not found');
    expectError(await server.api('PATCH', `/nodes/${slug}/rules/${id}`, { enabled: true }), 404, 'Rule not found');
    expectError(await server.api('DELETE', `/nodes/${slug}/rules/${id}`), 404, 'Rule not found');
  });

  it('a rule is reached only through its own node; unknown nodes are 404 Node not found', async () => {
    const id = (await post(timeRule())).body.data.id;
    const other = (await createNode(server)).slug;
    expectError(await server.api('GET', `/nodes/${other}/rules/${id}`), 404, 'Rule not found');
    expectError(await server.api('DELETE', `/nodes/${other}/rules/${id}`), 404, 'Rule not found');
    expectError(await server.api('POST', '/nodes/ZZZZZZZZ/rules', timeRule()), 404, 'Node not found');
    expectError(await server.api('GET', '/nodes/ZZZZZZZZ/rules'), 404, 'Node not found');
    expect((await server.api('GET', `/nodes/${slug}/rules/${id}`)).status).toBe(200);
  });
});

describe('routing rules created in the same millisecond', () => {
  it('keep their creation order among equal priorities', async () => {
    const server = await startTestServer({ limits: 'unlimited', clock: new ManualClock() });
    try {
      const slug = (await createNode(server)).slug;
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await server.api('POST', `/nodes/${slug}/rules`, timeRule())).body.data.id);
      const list = await server.api('GET', `/nodes/${slug}/rules`);
      expect(list.body.data.map((r: { id: string }) => r.id)).toEqual(ids);
    } finally {
      await server.close();
    }
  });
});
