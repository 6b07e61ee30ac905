/**
 * The public scan URL over real HTTP on a real server and SQLite file: every function type,
 * every status, rules at scan time, what is recorded (and what is not), analytics numbers
 * against known scans, the scan list/CSV and QR codes.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../../server/platform/clock.ts';
import { ScanWriter } from '../../server/features/scans/writer.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { subscribeToScans } from '../support/scanSubscriber.ts';
import { parseVcard } from './vcard-reader.ts';
import { needs } from '../support/system.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

let server: TestServer;
const clock = new ManualClock('2026-11-23T10:00:00.000Z'); // a Monday

interface ScanOptions {
  method?: string;
  ua?: string;
  ip?: string;
  country?: string;
}

async function scan(path: string, o: ScanOptions = {}) {
  const headers: Record<string, string> = { 'user-agent': o.ua ?? IPHONE };
  if (o.ip) headers['x-forwarded-for'] = o.ip;
  if (o.country) headers['cf-ipcountry'] = o.country;
  const res = await fetch(`${server.url}${path}`, { method: o.method ?? 'GET', headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function services() {
  return server.running.app.services;
}

function createNode(function_type: string, payload: Record<string, unknown>, label = 'Node') {
  return services().nodes.create(server.orgId, { label, function_type, payload } as never);
}

function db() {
  return server.running.db;
}

/**
 * Records `count` human scans of the node straight through the scan writer (not folded yet), a
 * batch at a time with the event loop free between batches: held for seconds on a loaded
 * machine, the loop would let the server's keep-alive timeout and the client's next request on
 * that connection cross (ECONNRESET).
 */
async function recordStraight(node: { id: string; slug: string }, count: number, at: (i: number) => number): Promise<void> {
  const writer = new ScanWriter(db());
  for (let from = 0; from < count; from += 500) {
    await new Promise((r) => setImmediate(r));
    writer.write(
      Array.from({ length: Math.min(500, count - from) }, (_, k) => ({
        node_id: node.id, org_id: server.orgId, slug: node.slug, ts: at(from + k), device_type: 'mobile', os: 'ios', browser: 'Mobile Safari',
        country: 'FR', source: 'qr', rule_id: null, outcome: 'redirect', is_bot: 0, visitor_hash: `straight-${from + k}`,
      })),
    );
  }
}

function scanRows(nodeId: string) {
  return db().prepare('SELECT * FROM scan_events WHERE node_id = ? ORDER BY id').all(nodeId) as Array<Record<string, unknown>>;
}

function scanCount(nodeId: string): number {
  return db().prepare('SELECT scan_count FROM nodes WHERE id = ?').pluck().get(nodeId) as number;
}

beforeAll(async () => {
  server = await startTestServer({ clock, trustProxy: true });
  subscribeToScans(db(), server.orgId);
});
afterAll(async () => {
  await server?.close();
});

describe('function types', () => {
  it('redirect: 302 with Cache-Control: no-store, recorded before the answer', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/landing?a=1' });
    const res = await scan(`/v/${node.slug}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/landing?a=1');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    // answered ⇒ committed: the rows are there as soon as the response is
    expect(scanRows(node.id)).toHaveLength(1);
    expect(scanCount(node.id)).toBe(1);
    const events = db().prepare("SELECT data_json FROM outbox_events WHERE type = 'node.scanned'").pluck().all() as string[];
    const mine = events.map((e) => JSON.parse(e)).filter((e) => e.node.id === node.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ node: { slug: node.slug }, device_type: 'mobile', os: 'ios', source: 'qr', outcome: 'redirect', rule_id: null });
  });

  it('vcard: an escaped contact page and a contact.vcf that reads back', async () => {
    const payload = {
      first_name: 'Zoë <b>',
      last_name: 'Dupont; Jr.',
      email: 'zoe@example.com',
      phone: '+33 6 12 34 56 78',
      organization: 'Acme, Inc.',
      website: 'https://example.com',
      job_title: 'Field technician',
    };
    const node = await createNode('vcard', payload);
    const page = await scan(`/v/${node.slug}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toContain('Zoë &lt;b&gt;');
    expect(page.text).not.toContain('<b>');
    expect(page.text).toContain(`href="/v/${node.slug}/contact.vcf"`);
    expect(page.text).toContain('Save contact');

    const vcf = await scan(`/v/${node.slug.toLowerCase()}/contact.vcf`);
    expect(vcf.status).toBe(200);
    expect(vcf.headers.get('content-type')).toBe('text/vcard; charset=utf-8');
    expect(vcf.headers.get('content-disposition')).toContain('attachment');
    const props = parseVcard(vcf.text);
    const get = (n: string) => props.find((p) => p.name === n)?.value;
    expect(get('VERSION')).toBe('3.0');
    expect(get('FN')).toBe('Zoë <b> Dupont; Jr.');
    expect(get('N')).toBe('Dupont; Jr.;Zoë <b>;;;');
    expect(get('ORG')).toBe('Acme, Inc.');
    expect(get('TEL')).toBe('+33 6 12 34 56 78');
    expect(get('EMAIL')).toBe('zoe@example.com');
    expect(get('URL')).toBe('https://example.com');
    // the page view is a scan, the download is not
    expect(scanCount(node.id)).toBe(1);
  });

  it('wifi: SSID, copyable password and an inline WIFI: QR code', async () => {
    const node = await createNode('wifi', { ssid: 'Café <Guest>', password: 'pa:ss;wo,rd"1', security: 'WPA2' });
    const page = await scan(`/v/${node.slug}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Café &lt;Guest&gt;');
    expect(page.text).toContain('pa:ss;wo,rd&quot;1');
    expect(page.text).toMatch(/<svg[^>]*role="img"/);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'sha256-/);
    const vcf = await scan(`/v/${node.slug}/contact.vcf`);
    expect(vcf.status).toBe(404);
  });

  it('microsite and digital_card: escaped server-rendered pages', async () => {
    const site = await createNode('microsite', {
      title: 'Open day </title><script>alert(1)</script>',
      body: 'Line 1\nLine 2 & more',
      theme_color: '#0F7B5F',
      links: [{ label: 'Programme "2026"', url: 'https://example.com/p' }],
    });
    const s = await scan(`/v/${site.slug}`);
    expect(s.status).toBe(200);
    expect(s.text).not.toContain('<script>alert');
    expect(s.text).toContain('Open day &lt;/title&gt;&lt;script&gt;');
    expect(s.text).toContain('Programme &quot;2026&quot;');
    expect(s.text).toContain('--accent:#0F7B5F');

    const card = await createNode('digital_card', { name: 'Amira <i>Haddad</i>', email: 'amira@example.com', phone: '+44 20 7946 0000', bio: 'Hi' });
    const c = await scan(`/v/${card.slug}`);
    expect(c.status).toBe(200);
    expect(c.text).toContain('Amira &lt;i&gt;Haddad&lt;/i&gt;');
    expect(c.text).toContain('href="tel:+442079460000"');
    expect(c.text).toContain('href="mailto:amira@example.com"');
  });

  it('digital_card: Save contact, like the vCard page, gives a contact.vcf with the bio as the note', async () => {
    const card = await createNode('digital_card', {
      name: 'Amira Haddad',
      job_title: 'Site lead',
      organization: 'Acme, Inc.',
      email: 'amira@example.com',
      phone: '+44 20 7946 0000',
      website: 'https://example.com/amira',
      bio: 'Ten years of field work; ask me about tags.',
    });
    const page = await scan(`/v/${card.slug}`);
    expect(page.text).toContain(`<a class="btn alt" href="/v/${card.slug}/contact.vcf" download>Save contact</a>`);
    const vcf = await scan(`/v/${card.slug}/contact.vcf`);
    expect(vcf.status).toBe(200);
    expect(vcf.headers.get('content-type')).toBe('text/vcard; charset=utf-8');
    expect(vcf.headers.get('content-disposition')).toContain('filename="Amira Haddad.vcf"');
    const props = parseVcard(vcf.text);
    const get = (n: string) => props.find((p) => p.name === n)?.value;
    expect(get('FN')).toBe('Amira Haddad');
    expect(get('TITLE')).toBe('Site lead');
    expect(get('ORG')).toBe('Acme, Inc.');
    expect(get('TEL')).toBe('+44 20 7946 0000');
    expect(get('EMAIL')).toBe('amira@example.com');
    expect(get('URL')).toBe('https://example.com/amira');
    expect(get('NOTE')).toBe('Ten years of field work; ask me about tags.');
    expect(scanCount(card.id)).toBe(1); // the download is not a scan
  });

  it('action: WhatsApp and Telegram redirect, SMS/call/email pages open the app', async () => {
    const wa = await createNode('action', { action_type: 'whatsapp', phone: '+1 (555) 010-0199', message: 'Room 12 & 13?' });
    const r1 = await scan(`/v/${wa.slug}`);
    expect(r1.status).toBe(302);
    expect(r1.headers.get('location')).toBe('https://wa.me/15550100199?text=Room%2012%20%26%2013%3F');
    expect(r1.headers.get('cache-control')).toBe('no-store');

    const tg = await createNode('action', { action_type: 'telegram', phone: '+44 20 7946 0000' });
    expect((await scan(`/v/${tg.slug}`)).headers.get('location')).toBe('https://t.me/+442079460000');

    const sms = await createNode('action', { action_type: 'sms', phone: '+1 555 0100', message: 'Clean <room>' });
    const r3 = await scan(`/v/${sms.slug}`);
    expect(r3.status).toBe(200);
    expect(r3.text).toContain('href="sms:+15550100?&amp;body=Clean%20%3Croom%3E"');
    expect(r3.text).toContain('Clean &lt;room&gt;');

    const call = await createNode('action', { action_type: 'call', phone: '+1 555 0100' });
    expect((await scan(`/v/${call.slug}`)).text).toContain('href="tel:+15550100"');
    const mail = await createNode('action', { action_type: 'email', email: 'desk@example.com', message: 'Hello' });
    expect((await scan(`/v/${mail.slug}`)).text).toContain('href="mailto:desk@example.com?body=Hello"');
  });
});

describe('node status and unknown slugs', () => {
  it('paused 503, retired 410, deleted 410, draft 404 "not active yet", unknown 404', async () => {
    const url = { url: 'https://example.com' };
    const paused = await createNode('redirect', url);
    await services().nodes.update(server.orgId, paused.slug, { status: 'paused' } as never);
    const retired = await createNode('redirect', url);
    await services().nodes.update(server.orgId, retired.slug, { status: 'retired' } as never);
    const deleted = await createNode('redirect', url);
    await services().nodes.remove(server.orgId, deleted.slug);
    const draft = await services().nodes.create(server.orgId, { label: 'Draft', function_type: 'redirect', payload: url, status: 'draft' } as never);

    const p = await scan(`/v/${paused.slug}`);
    expect(p.status).toBe(503);
    expect(p.text).toContain('This code is paused');
    expect(p.headers.get('cache-control')).toBe('no-store');
    const r = await scan(`/v/${retired.slug}`);
    expect(r.status).toBe(410);
    expect(r.text).toContain('retired');
    const d = await scan(`/v/${deleted.slug}`);
    expect(d.status).toBe(410);
    expect(d.text).toContain('no longer exists');
    const n = await scan(`/v/${draft.slug}`);
    expect(n.status).toBe(404);
    expect(n.text).toContain('not active yet');
    const u = await scan('/v/ZZZZZZZZ');
    expect(u.status).toBe(404);
    expect(u.text).toContain('could not find');
    expect((await scan('/v/not-a-slug')).status).toBe(404);

    // scans of existing nodes are recorded with their outcome; deleted/unknown have no node
    expect(scanRows(paused.id).map((s) => s.outcome)).toEqual(['paused']);
    expect(scanRows(retired.id).map((s) => s.outcome)).toEqual(['retired']);
    expect(scanRows(draft.id).map((s) => s.outcome)).toEqual(['inactive']);
  });

  it('deleting a node deletes its scans and roll-ups; its slug then answers 410', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/gone' });
    await scan(`/v/${node.slug}`);
    expect((await server.api('GET', `/nodes/${node.slug}/analytics`)).body.data.totals.scans).toBe(1); // folds roll-ups
    expect(db().prepare('SELECT count(*) FROM scan_rollups WHERE node_id = ?').pluck().get(node.id)).toBeGreaterThan(0);
    await services().nodes.remove(server.orgId, node.slug);
    for (const table of ['scan_events', 'scan_rollups', 'scan_visitor_hours', 'scan_visitor_days', 'scan_rule_visitor_hours']) {
      expect(db().prepare(`SELECT count(*) FROM ${table} WHERE node_id = ?`).pluck().get(node.id)).toBe(0);
    }
    expect((await scan(`/v/${node.slug}`)).status).toBe(410);
  });

  it('an unconfigured batch node (empty payload) is "not active yet"', async () => {
    const node = await createNode('redirect', { url: 'https://example.com' });
    db().prepare("UPDATE nodes SET payload_json = '{}' WHERE id = ?").run(node.id);
    expect((await scan(`/v/${node.slug}`)).status).toBe(404);
  });

  it('matches scheme, /v/ and slug case-insensitively, with Crockford aliases', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/case' });
    const messy = node.slug.toLowerCase().replace(/0/g, 'o').replace(/1/g, 'l');
    const res = await scan(`/V/${messy}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/case');
  });

  it('serves the new payload right after a change (cache invalidation)', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/old' });
    expect((await scan(`/v/${node.slug}`)).headers.get('location')).toBe('https://example.com/old');
    await services().nodes.update(server.orgId, node.slug, { payload: { url: 'https://example.com/new' } } as never);
    expect((await scan(`/v/${node.slug}`)).headers.get('location')).toBe('https://example.com/new');
    const rule = await services().rules.create(server.orgId, node.slug, {
      rule_type: 'geo_based',
      conditions: { countries: ['FR'] },
      function_type: 'redirect',
      payload: { url: 'https://example.com/fr' },
    } as never);
    expect((await scan(`/v/${node.slug}`, { country: 'FR' })).headers.get('location')).toBe('https://example.com/fr');
    await services().rules.remove(server.orgId, node.slug, rule.id);
    expect((await scan(`/v/${node.slug}`, { country: 'FR' })).headers.get('location')).toBe('https://example.com/new');
  });
});

describe('what is recorded', () => {
  it('HEAD answers like GET but is not a scan', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/head' });
    const res = await scan(`/v/${node.slug}`, { method: 'HEAD' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/head');
    const page = await createNode('vcard', { first_name: 'Head' });
    const res2 = await scan(`/v/${page.slug}`, { method: 'HEAD' });
    expect(res2.status).toBe(200);
    expect(res2.text).toBe('');
    expect(scanRows(node.id)).toHaveLength(0);
    expect(scanRows(page.id)).toHaveLength(0);
    expect(scanCount(node.id)).toBe(0);
    // POST is the password page's form (docs/scans.md "Node limits"): on a node without a
    // password it answers as a GET would, and is no scan either. Other methods: 405.
    expect((await scan(`/v/${node.slug}`, { method: 'POST' })).status).toBe(302);
    expect(scanRows(node.id)).toHaveLength(0);
    const put = await scan(`/v/${node.slug}`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('bots and link previewers get the answer, are recorded with the flag, but not counted', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/bot' });
    const res = await scan(`/v/${node.slug}`, { ua: SLACK });
    expect(res.status).toBe(302);
    const rows = scanRows(node.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ is_bot: 1 });
    expect(scanCount(node.id)).toBe(0);
    const events = (db().prepare("SELECT data_json FROM outbox_events WHERE type = 'node.scanned'").pluck().all() as string[]).filter((e) => e.includes(node.id));
    expect(events).toHaveLength(0);
  });

  it('records device, OS, browser, country, source; never the raw IP', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/rec' });
    await scan(`/v/${node.slug}?nfc`, { ua: ANDROID, ip: '203.0.113.77', country: 'BE' });
    await scan(`/v/${node.slug}`, { ua: WINDOWS, ip: '81.2.69.142' }); // no CF header: offline table (GB)
    await scan(`/v/${node.slug}`, { ua: IPHONE, ip: '2a01:e0a:1f2:3::77' }); // IPv6: offline IPv6 table (FR)
    const rows = scanRows(node.id);
    expect(rows[0]).toMatchObject({ device_type: 'mobile', os: 'android', browser: 'Chrome', country: 'BE', source: 'nfc_unverified', is_bot: 0 });
    expect(rows[1]).toMatchObject({ device_type: 'desktop', os: 'windows', country: 'GB', source: 'qr' });
    expect(rows[2]).toMatchObject({ device_type: 'mobile', os: 'ios', country: 'FR' });
    const dump = JSON.stringify(db().prepare('SELECT * FROM scan_events').all());
    expect(dump).not.toContain('203.0.113.77');
    expect(dump).not.toContain('81.2.69.142');
    expect(dump).not.toContain('2a01:e0a');
  });

  it('keeps one visitor key all UTC day and a new one (new salt) from midnight UTC', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/day' });
    const saltDay = () => db().prepare('SELECT day FROM scan_salt WHERE id = 1').pluck().get();
    const start = clock.now();
    try {
      await scan(`/v/${node.slug}`, { ip: '198.51.100.7' });
      clock.set('2026-11-23T23:59:59.999Z');
      await scan(`/v/${node.slug}`, { ip: '198.51.100.7' });
      clock.set('2026-11-24T00:00:00.000Z');
      await scan(`/v/${node.slug}`, { ip: '198.51.100.7' });
      expect(saltDay()).toBe('2026-11-24');
    } finally {
      clock.set(new Date(start).toISOString());
    }
    const keys = scanRows(node.id).map((r) => r.visitor_hash);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[1]);
  });
});

describe('rules at scan time', () => {
  it('time, geo, device and split rules choose what is served, in priority order', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/default' });
    const add = (rule_type: string, conditions: unknown, url: string, priority: number) =>
      services().rules.create(server.orgId, node.slug, { rule_type, conditions, function_type: 'redirect', payload: { url }, priority } as never);
    await add('time_based', { timezone: 'Europe/Paris', windows: [{ days: [6, 7], start_time: '00:00', end_time: '00:00' }] }, 'https://example.com/weekend', 0);
    await add('geo_based', { countries: ['JP'] }, 'https://example.com/jp', 1);
    await add('device_based', { devices: ['desktop'] }, 'https://example.com/desktop', 2);
    const vcardRule = await services().rules.create(server.orgId, node.slug, {
      rule_type: 'device_based',
      conditions: { os: ['android'] },
      function_type: 'vcard',
      payload: { first_name: 'Android' },
      priority: 3,
    } as never);

    const loc = async (o: ScanOptions) => (await scan(`/v/${node.slug}`, o)).headers.get('location');
    expect(await loc({ ua: IPHONE, ip: '198.51.100.1', country: 'US' })).toBe('https://example.com/default');
    expect(await loc({ ua: IPHONE, ip: '198.51.100.1', country: 'JP' })).toBe('https://example.com/jp');
    expect(await loc({ ua: WINDOWS, ip: '198.51.100.1', country: 'JP' })).toBe('https://example.com/jp'); // geo before device
    expect(await loc({ ua: WINDOWS, ip: '198.51.100.1', country: 'US' })).toBe('https://example.com/desktop');
    const android = await scan(`/v/${node.slug}`, { ua: ANDROID, country: 'US' });
    expect(android.status).toBe(200); // a rule may serve another function type
    expect(android.text).toContain('Android');
    expect(scanRows(node.id).at(-1)).toMatchObject({ rule_id: vcardRule.id, outcome: 'vcard' });

    clock.set('2026-11-28T12:00:00.000Z'); // Saturday
    expect(await loc({ ua: WINDOWS, country: 'JP' })).toBe('https://example.com/weekend');
    clock.set('2026-11-23T10:00:00.000Z');
  });

  it('a split gives one visitor one variant, and shares over many visitors', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/a' });
    await services().rules.create(server.orgId, node.slug, {
      rule_type: 'traffic_split',
      conditions: { weight: 30 },
      function_type: 'redirect',
      payload: { url: 'https://example.com/b' },
    } as never);
    const first = (await scan(`/v/${node.slug}`, { ip: '192.0.2.10' })).headers.get('location');
    for (let i = 0; i < 5; i++) expect((await scan(`/v/${node.slug}`, { ip: '192.0.2.10' })).headers.get('location')).toBe(first);
    let b = 0;
    const N = 400;
    await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const l = (await scan(`/v/${node.slug}`, { ip: `10.${i >> 8}.${i & 255}.9` })).headers.get('location');
        if (l === 'https://example.com/b') b++;
      }),
    );
    // 30% of 400 = 120, standard deviation ≈ 9.2: allow 4 sigma
    expect(b).toBeGreaterThan(120 - 37);
    expect(b).toBeLessThan(120 + 37);
  });
});

describe('analytics', () => {
  it('counts known scans: totals, unique visitors, series, breakdowns, org-wide, list and CSV', async () => {
    const node = await createNode('redirect', { url: 'https://example.com/an' }, 'Analytics node');
    const other = await createNode('redirect', { url: 'https://example.com/other' }, 'Other node');
    // Day 1 (2026-12-01): 3 scans by visitor A (iPhone), 2 by B (Android, NFC), 1 bot
    clock.set('2026-12-01T09:10:00.000Z');
    for (let i = 0; i < 3; i++) await scan(`/v/${node.slug}`, { ua: IPHONE, ip: '198.51.100.1', country: 'FR' });
    clock.set('2026-12-01T11:30:00.000Z');
    for (let i = 0; i < 2; i++) await scan(`/v/${node.slug}?nfc`, { ua: ANDROID, ip: '198.51.100.2', country: 'DE' });
    await scan(`/v/${node.slug}`, { ua: SLACK, ip: '198.51.100.3' });
    // Day 2: visitor A again (a new daily key: counted again), and a desktop
    clock.set('2026-12-02T15:00:00.000Z');
    await scan(`/v/${node.slug}`, { ua: IPHONE, ip: '198.51.100.1', country: 'FR' });
    await scan(`/v/${node.slug}`, { ua: WINDOWS, ip: '198.51.100.4', country: 'FR' });
    await scan(`/v/${other.slug}`, { ua: WINDOWS, ip: '198.51.100.4', country: 'FR' });
    clock.set('2026-12-03T00:00:00.000Z');

    const res = await server.api('GET', `/nodes/${node.slug}/analytics?from=2026-12-01&to=2026-12-03&interval=day`);
    expect(res.status).toBe(200);
    const a = res.body.data;
    expect(a.totals).toEqual({ scans: 7, unique_visitors: 4 });
    expect(a.series).toEqual([
      { start: '2026-12-01T00:00:00.000Z', scans: 5, unique_visitors: 2 },
      { start: '2026-12-02T00:00:00.000Z', scans: 2, unique_visitors: 2 },
    ]);
    const asMap = (list: Array<{ value: string | null; scans: number }>) => Object.fromEntries(list.map((x) => [x.value, x.scans]));
    expect(asMap(a.breakdowns.device_type)).toEqual({ mobile: 6, desktop: 1 });
    expect(asMap(a.breakdowns.os)).toEqual({ ios: 4, android: 2, windows: 1 });
    expect(asMap(a.breakdowns.country)).toEqual({ FR: 5, DE: 2 });
    expect(asMap(a.breakdowns.source)).toEqual({ qr: 5, nfc_unverified: 2 });
    expect(asMap(a.breakdowns.rule)).toEqual({ null: 7 });

    const hourly = (await server.api('GET', `/nodes/${node.slug}/analytics?from=2026-12-01T09:00:00Z&to=2026-12-01T12:00:00Z&interval=hour`)).body.data;
    expect(hourly.series.map((b: { scans: number }) => b.scans)).toEqual([3, 0, 2]);
    const weekly = (await server.api('GET', `/nodes/${node.slug}/analytics?from=2026-11-30&to=2026-12-07&interval=week`)).body.data;
    expect(weekly.series).toEqual([{ start: '2026-11-30T00:00:00.000Z', scans: 7, unique_visitors: 4 }]);

    const org = (await server.api('GET', '/analytics?from=2026-12-01&to=2026-12-03&top=2')).body.data;
    expect(org.totals).toEqual({ scans: 8, unique_visitors: 4, nodes_scanned: 2 });
    expect(org.top_nodes.map((n: { slug: string; scans: number }) => [n.slug, n.scans])).toEqual([
      [node.slug, 7],
      [other.slug, 1],
    ]);

    const list = (await server.api('GET', `/nodes/${node.slug}/scans?limit=3`)).body;
    expect(list.total).toBe(7);
    expect(list.data).toHaveLength(3);
    expect(list.data[0]).toMatchObject({ device_type: 'desktop', os: 'windows', bot: false, timestamp: '2026-12-02T15:00:00.000Z' });
    const page3 = (await server.api('GET', `/nodes/${node.slug}/scans?limit=3&offset=6`)).body;
    expect(page3.data).toHaveLength(1);
    expect(page3.data[0].timestamp).toBe('2026-12-01T09:10:00.000Z');
    const withBots = (await server.api('GET', `/nodes/${node.slug}/scans?bots=include`)).body;
    expect(withBots.total).toBe(8);

    const csv = await server.api('GET', `/nodes/${node.slug}/scans?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('id,timestamp,device_type,os,browser,country,source,rule_id,outcome,bot,visitor');
    expect(lines).toHaveLength(8);
    expect(scanCount(node.id)).toBe(7);
  });

  it('exports thousands of scans as CSV a page at a time, and a client leaving mid-export costs nothing', async () => {
    clock.advance(3_600_000); // a fresh rate-limit window for this test's requests
    const node = await createNode('redirect', { url: 'https://example.com' });
    // pairs of scans share a time
    await recordStraight(node, 2600, (i) => Date.parse('2026-10-01T00:00:00.000Z') + Math.floor(i / 2) * 1000);
    const csv = await server.api('GET', `/nodes/${node.slug}/scans?format=csv`);
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split('\r\n');
    expect(lines).toHaveLength(2601);
    const ids = lines.slice(1).map((l) => Number(l.split(',')[0]));
    expect(new Set(ids).size).toBe(2600);
    expect(ids).toEqual([...ids].sort((a, b) => b - a)); // newest first (time, then id)

    // Read a little, then hang up: the export stops and the server goes on answering.
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${server.url}/v1/nodes/${node.slug}/scans?format=csv`, { headers: { authorization: `Bearer ${server.apiKey}` } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    });
    expect((await scan(`/v/${node.slug}`)).status).toBe(302);
    expect((await server.api('GET', `/nodes/${node.slug}/scans?limit=1`)).body.total).toBe(2601);
  });

  it('a query behind a large unfolded backlog folds it in chunks: the server answers meanwhile', async () => {
    clock.advance(3_600_000);
    const node = await createNode('redirect', { url: 'https://example.com' });
    // The background fold waits: the backlog must still be there when the query comes.
    await services().analytics.stop();
    onTestFinished(() => services().analytics.start());
    await recordStraight(node, 20_000, (i) => Date.parse('2026-10-02T00:00:00.000Z') + i * 1000);
    const done: string[] = [];
    const watermark = db().prepare('SELECT last_event FROM scan_rollup_state WHERE id = 1').pluck();
    const before = watermark.get();
    const query = server.api('GET', `/nodes/${node.slug}/analytics?from=2026-10-01&to=2026-10-03`).then((r) => {
      done.push('analytics');
      return r;
    });
    // The fold of the 20 000 scans has started (its first chunk is in): from now on it yields
    // between chunks, which is when /healthz must get its answer.
    while (watermark.get() === before) await new Promise((r) => setImmediate(r));
    const health = await fetch(`${server.url}/healthz`);
    done.push('healthz');
    expect(health.status).toBe(200);
    const analytics = await query;
    expect(analytics.status).toBe(200);
    expect(analytics.body.data.totals.scans).toBe(20_000);
    expect(done).toEqual(['healthz', 'analytics']);
  });

  it('rejects bad queries with 422 and unknown nodes with 404', async () => {
    const node = await createNode('redirect', { url: 'https://example.com' });
    const bad = await server.api('GET', `/nodes/${node.slug}/analytics?interval=month`);
    expect(bad.status).toBe(422);
    expect(bad.body.details.interval).toBeTruthy();
    expect((await server.api('GET', `/nodes/${node.slug}/analytics?from=yesterday`)).status).toBe(422);
    expect((await server.api('GET', `/nodes/${node.slug}/analytics?from=2026-12-02&to=2026-12-01`)).status).toBe(422);
    expect((await server.api('GET', `/nodes/${node.slug}/analytics?from=2020-01-01&to=2026-01-01&interval=hour`)).status).toBe(422);
    expect((await server.api('GET', `/nodes/${node.slug}/scans?limit=0`)).status).toBe(422);
    const missing = await server.api('GET', '/nodes/ZZZZZZZZ/analytics');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('Node not found');
  });
});

describe('QR codes', () => {
  const noZbar = needs.zbar();

  it('SVG and PNG of the upper-case scan URL', async ({ skip }) => {
    const node = await createNode('redirect', { url: 'https://example.com' });
    const svg = await server.api('GET', `/nodes/${node.slug}/qr?format=svg&ecc=H&margin=2`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toContain('image/svg+xml');
    expect(svg.text).toContain('<svg');
    const png = await fetch(`${server.url}/v1/nodes/${node.slug}/qr?format=png&size=300`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    const buf = Buffer.from(await png.arrayBuffer());
    expect(buf.readUInt32BE(16)).toBe(300); // IHDR width
    expect((await server.api('GET', `/nodes/${node.slug}/qr?size=10`)).status).toBe(422);
    expect((await server.api('GET', `/nodes/${node.slug}/qr?ecc=X`)).status).toBe(422);
    if (noZbar) return skip(noZbar);
    const file = join(server.dataDir, 'qr.png');
    writeFileSync(file, buf);
    const decoded = execFileSync('zbarimg', ['--quiet', '--raw', file]).toString().trim();
    expect(decoded).toBe(`${server.url}/v/${node.slug}`.toUpperCase());
    // and the upper-case URL resolves
    const res = await fetch(decoded.replace(/^HTTP:\/\/[^/]+/, server.url), { redirect: 'manual' });
    expect(res.status).toBe(302);
  });
});
