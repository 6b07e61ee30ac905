/**
 * Node limits (issue 17 item 3, docs/api.md "Node limits"): expires_at, max_scans, a password and
 * after_limit through the API, and what real scans over HTTP get: expiry on an injected clock,
 * the scan limit counting what scan_count counts, the password page (right, wrong, too many
 * attempts). Runs on both backends (vitest.config.ts onPostgresToo).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { expectInvalid, validPayloads } from '../support/fixtures.ts';
import { rows } from '../support/rows.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const DESTINATION = validPayloads.redirect.url;

let server: TestServer;
const clock = new ManualClock('2026-11-23T10:00:00.000Z');

async function scan(slug: string, o: { ua?: string; ip?: string; method?: string; password?: string; path?: string } = {}) {
  const headers: Record<string, string> = { 'user-agent': o.ua ?? IPHONE, 'x-forwarded-for': o.ip ?? '203.0.113.7' };
  let body: string | undefined;
  if (o.password !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams({ password: o.password }).toString();
  }
  const res = await fetch(`${server.url}/v/${slug}${o.path ?? ''}`, { method: o.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function create(extra: Record<string, unknown>, type: keyof typeof validPayloads = 'redirect') {
  const res = await server.api('POST', '/nodes', { label: 'Limited', function_type: type, payload: validPayloads[type], ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; slug: string };
}

/** On PostgreSQL the scan path's cache follows a change within its staleness bound. */
function eventually(check: () => Promise<void>): Promise<void> {
  return vi.waitFor(check, { timeout: 15_000, interval: 50 });
}

beforeAll(async () => {
  server = await startTestServer({ limits: 'unlimited', clock, trustProxy: true });
});
afterAll(async () => {
  await server.close();
});

describe('node limits through the API', () => {
  it('create and GET: expires_at normalised to UTC, max_scans, password_protected, after_limit (gone by default)', async () => {
    const plain = await create({});
    const got = (await server.api('GET', `/nodes/${plain.slug}`)).body.data;
    expect(got).toMatchObject({ expires_at: null, max_scans: null, password_protected: false, after_limit: { type: 'gone' } });

    const node = await create({
      expires_at: '2026-12-31T23:59:59+01:00',
      max_scans: 100,
      password: 'open sesame',
      after_limit: { type: 'redirect', url: 'https://example.com/sold-out' },
    });
    const res = await server.api('GET', `/nodes/${node.slug}`);
    expect(res.body.data).toMatchObject({
      expires_at: '2026-12-31T22:59:59.000Z',
      max_scans: 100,
      password_protected: true,
      after_limit: { type: 'redirect', url: 'https://example.com/sold-out' },
    });
    expect(res.body.data).not.toHaveProperty('password');
    expect(res.text).not.toContain('open sesame');
    expect(res.text).not.toContain('scrypt');
    const list = await server.api('GET', '/nodes?limit=100');
    expect(list.text).not.toContain('scrypt');
  });

  it('the password is stored only as a salted scrypt hash (two nodes, one password: two hashes)', async () => {
    const a = await create({ password: 'same password' });
    const b = await create({ password: 'same password' });
    const stored = await rows<{ id: string; password_hash: string }>(server.running.store, 'SELECT id, password_hash FROM nodes WHERE id IN (?, ?)', a.id, b.id);
    expect(stored).toHaveLength(2);
    for (const r of stored) {
      expect(r.password_hash).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+\$[\w-]+$/);
      expect(r.password_hash).not.toContain('same password');
    }
    expect(stored[0]?.password_hash).not.toBe(stored[1]?.password_hash);
  });

  it('PATCH sets and clears each limit (null clears; after_limit null = gone), answering the spec\'s seven fields', async () => {
    const node = await create({});
    const get = async () => (await server.api('GET', `/nodes/${node.slug}`)).body.data;
    const set = await server.api('PATCH', `/nodes/${node.slug}`, { expires_at: '2027-01-01T00:00:00Z', max_scans: 5, password: 'letmein', after_limit: { type: 'redirect', url: 'https://example.com/over' } });
    expect(set.status, set.text).toBe(200);
    expect(Object.keys(set.body.data).sort()).toEqual(['function_type', 'id', 'label', 'payload', 'slug', 'status', 'url']);
    expect(await get()).toMatchObject({ expires_at: '2027-01-01T00:00:00.000Z', max_scans: 5, password_protected: true, after_limit: { type: 'redirect', url: 'https://example.com/over' } });
    // Other fields leave the limits alone.
    expect((await server.api('PATCH', `/nodes/${node.slug}`, { label: 'Renamed' })).status).toBe(200);
    expect(await get()).toMatchObject({ max_scans: 5, password_protected: true });
    expect((await server.api('PATCH', `/nodes/${node.slug}`, { expires_at: null, max_scans: null, password: null, after_limit: null })).status).toBe(200);
    expect(await get()).toMatchObject({ expires_at: null, max_scans: null, password_protected: false, after_limit: { type: 'gone' } });
  });

  it('refuses invalid limits with 422 naming the field', async () => {
    const post = (extra: Record<string, unknown>) => server.api('POST', '/nodes', { label: 'x', function_type: 'redirect', payload: validPayloads.redirect, ...extra });
    for (const expires_at of ['2026-12-31', '2026-12-31T23:59:59', 'tomorrow', 42]) expectInvalid(await post({ expires_at }), 'expires_at');
    for (const max_scans of [0, -1, 1.5, '10']) expectInvalid(await post({ max_scans }), 'max_scans');
    for (const password of ['abc', '', 1234, 'x'.repeat(201)]) expectInvalid(await post({ password }), 'password');
    expectInvalid(await post({ after_limit: { type: 'redirect', url: 'javascript:alert(1)' } }), 'after_limit.url');
    expectInvalid(await post({ after_limit: { type: 'redirect' } }), 'after_limit.url');
    expectInvalid(await post({ after_limit: { type: 'vanish' } }), 'after_limit.type');
    const node = await create({});
    expectInvalid(await server.api('PATCH', `/nodes/${node.slug}`, { max_scans: 0 }), 'max_scans');
  });
});

describe('node limits at scan time', () => {
  it('expiry on the injected clock: served until expires_at, then the 410 page or the fallback', async () => {
    const expiresAt = new Date(clock.now() + 3_600_000).toISOString();
    const gone = await create({ expires_at: expiresAt });
    const fallback = await create({ expires_at: expiresAt, after_limit: { type: 'redirect', url: 'https://example.com/ended' } });
    await eventually(async () => {
      expect((await scan(gone.slug)).headers.get('location')).toBe(DESTINATION);
      expect((await scan(fallback.slug)).headers.get('location')).toBe(DESTINATION);
    });
    clock.set(Date.parse(expiresAt) - 1);
    expect((await scan(gone.slug)).status).toBe(302);
    clock.set(expiresAt);
    try {
      const page = await scan(gone.slug);
      expect(page.status).toBe(410);
      expect(page.text).toContain('This code has expired');
      expect(page.text).not.toContain(DESTINATION);
      const redirected = await scan(fallback.slug);
      expect(redirected.status).toBe(302);
      expect(redirected.headers.get('location')).toBe('https://example.com/ended');
      // HEAD answers the same, unrecorded.
      expect((await scan(gone.slug, { method: 'HEAD' })).status).toBe(410);
    } finally {
      clock.set('2026-11-23T10:00:00.000Z');
    }
  });

  it('max_scans counts what scan_count counts: bots and HEAD are served and not counted; then 410', async () => {
    const node = await create({ max_scans: 3 });
    await eventually(async () => expect((await scan(node.slug, { method: 'HEAD' })).status).toBe(302));
    for (let i = 0; i < 3; i++) {
      // A link previewer before each counts for nothing.
      expect((await scan(node.slug, { ua: SLACK })).status).toBe(302);
      expect((await scan(node.slug)).headers.get('location'), `scan ${i + 1}`).toBe(DESTINATION);
    }
    const over = await scan(node.slug);
    expect(over.status).toBe(410);
    expect(over.text).toContain('This code has reached its scan limit');
    expect(over.text).not.toContain(DESTINATION);
    // The refused scan was a scan of the tag: recorded and counted, with its outcome.
    const got = (await server.api('GET', `/nodes/${node.slug}`)).body.data;
    expect(got.scan_count).toBe(4);
    const outcomes = await rows<{ outcome: string; is_bot: number }>(server.running.store, 'SELECT outcome, is_bot FROM scan_events WHERE node_id = ? ORDER BY id', node.id);
    expect(outcomes.filter((r) => Number(r.is_bot) === 0).map((r) => r.outcome)).toEqual(['redirect', 'redirect', 'redirect', 'limit_reached']);

    // Raising the limit serves it again; a fallback replaces the page.
    await server.api('PATCH', `/nodes/${node.slug}`, { max_scans: 4, after_limit: { type: 'redirect', url: 'https://example.com/sold-out' } });
    await eventually(async () => expect((await scan(node.slug, { method: 'HEAD' })).headers.get('location')).toBe('https://example.com/sold-out'));
  });

  it('max_scans holds for scans that arrive together (one group commit)', async () => {
    const node = await create({ max_scans: 5 });
    await eventually(async () => expect((await scan(node.slug, { method: 'HEAD' })).status).toBe(302));
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => scan(node.slug, { ip: `198.51.100.${i + 1}` })));
    expect(answers.filter((a) => a.status === 302)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 410)).toHaveLength(7);
  });

  it('a password page first: no content in it; a wrong password gets it again (403), the right one the content', async () => {
    const node = await create({ password: 'hunter22' });
    const page = await eventually(async () => {
      const p = await scan(node.slug);
      expect(p.status).toBe(200);
    }).then(() => scan(node.slug));
    expect(page.status).toBe(200);
    expect(page.text).toContain('This code is password protected');
    expect(page.text).toMatch(/<form method="post">/);
    expect(page.text).not.toContain(DESTINATION);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(page.headers.get('cache-control')).toBe('no-store');

    const wrong = await scan(node.slug, { password: 'hunter2', ip: '192.0.2.10' });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('That password is not right');
    expect(wrong.text).not.toContain(DESTINATION);
    expect(wrong.headers.get('location')).toBeNull();

    const right = await scan(node.slug, { password: 'hunter22', ip: '192.0.2.10' });
    expect(right.status).toBe(302);
    expect(right.headers.get('location')).toBe(DESTINATION);

    // The form is not a scan: only the two GETs were recorded.
    expect((await server.api('GET', `/nodes/${node.slug}`)).body.data.scan_count).toBe(2);
  });

  it('a gated vCard: the page and contact.vcf both need the password', async () => {
    const node = await create({ password: 'card-pass' }, 'vcard');
    await eventually(async () => expect((await scan(node.slug)).text).toContain('password protected'));
    const vcf = await scan(node.slug, { path: '/contact.vcf' });
    expect(vcf.text).not.toContain('Lovelace');
    expect(vcf.text).toContain('password protected');
    const opened = await scan(node.slug, { password: 'card-pass', ip: '192.0.2.20' });
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('Lovelace');
    const file = await scan(node.slug, { path: '/contact.vcf', password: 'card-pass', ip: '192.0.2.20' });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^text\/vcard/);
    expect(file.text).toContain('FN:Ada Lovelace');
  });

  it('password attempts are limited per node and address: the sixth in 15 minutes gets 429, even a right one', async () => {
    const node = await create({ password: 'correct one' });
    await eventually(async () => expect((await scan(node.slug)).status).toBe(200));
    const ip = '192.0.2.30';
    for (let i = 0; i < 5; i++) expect((await scan(node.slug, { password: `guess ${i}`, ip })).status, `attempt ${i + 1}`).toBe(403);
    const locked = await scan(node.slug, { password: 'correct one', ip });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.text).not.toContain(DESTINATION);
    // Another address is not locked out.
    expect((await scan(node.slug, { password: 'correct one', ip: '192.0.2.31' })).status).toBe(302);
    // Attempts sent at once are bounded too.
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => scan(node.slug, { password: `burst ${i}`, ip: '192.0.2.32' })));
    expect(burst.filter((r) => r.status === 403)).toHaveLength(5);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(5);
    // After the window, the address may try again.
    clock.set(clock.now() + 15 * 60_000);
    try {
      expect((await scan(node.slug, { password: 'correct one', ip })).status).toBe(302);
    } finally {
      clock.set('2026-11-23T10:00:00.000Z');
    }
  });

  it('the last allowed scan\'s visitor may still unlock the content and save the card; after a further scan, no one can', async () => {
    const gated = await create({ password: 'one-time', max_scans: 1 });
    await eventually(async () => expect((await scan(gated.slug, { method: 'HEAD' })).status).toBe(200));
    expect((await scan(gated.slug)).status).toBe(200); // the password page: the one counted scan
    const unlocked = await scan(gated.slug, { password: 'one-time', ip: '192.0.2.50' });
    expect(unlocked.status).toBe(302);
    expect(unlocked.headers.get('location')).toBe(DESTINATION);
    // HEAD says what the next scan would get.
    expect((await scan(gated.slug, { method: 'HEAD' })).status).toBe(410);

    const card = await create({ max_scans: 1 }, 'vcard');
    await eventually(async () => expect((await scan(card.slug, { method: 'HEAD' })).status).toBe(200));
    expect((await scan(card.slug)).text).toContain('Lovelace'); // the card page: the one counted scan
    const saved = await scan(card.slug, { path: '/contact.vcf' }); // its "Save contact" button
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('FN:Ada Lovelace');
    expect((await scan(card.slug)).status).toBe(410);
    const late = await scan(card.slug, { path: '/contact.vcf' });
    expect(late.status).toBe(410);
    expect(late.text).not.toContain('Lovelace');
  });

  it('limits come before the password: a used-up gated node answers per after_limit, with or without the password', async () => {
    const node = await create({ password: 'pw-limit', max_scans: 1 });
    await eventually(async () => expect((await scan(node.slug, { method: 'HEAD' })).status).toBe(200));
    expect((await scan(node.slug)).status).toBe(200); // the password page: the one counted scan
    expect((await scan(node.slug)).status).toBe(410);
    const late = await scan(node.slug, { password: 'pw-limit', ip: '192.0.2.40' });
    expect(late.status).toBe(410);
    expect(late.text).not.toContain(DESTINATION);
  });
});
