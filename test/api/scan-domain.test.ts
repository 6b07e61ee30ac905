// The scan domain (issue 20, DESIGN §2): while an organization's scan base is loopback, labels and
// NFC writes are refused (409) unless the request allows a test; the organization sets its own
// scan domain with PATCH /v1/organization, and every URL it prints, writes or lists follows it.
// Runs on the backend of WAYMARK_TEST_BACKEND (SQLite by default, PostgreSQL in the postgres run).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAll, missingTools, renderPdf } from '../print/raster.ts';
import { createNode, expectError, expectInvalid, waitForBatch } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const skipRender = missingTools();
const SET_A_SCAN_DOMAIN = /^Set a scan domain first: the scan base http:\/\/127\.0\.0\.1:\d+ is a loopback address/;

async function get(server: TestServer, path: string): Promise<{ status: number; type: string; bytes: Buffer; json: any }> /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const res = await fetch(`${server.url}/v1${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, bytes, json: type.includes('json') ? JSON.parse(bytes.toString()) : undefined };
}

describe('scan domain: loopback refusals, their override, and PATCH /v1/organization', () => {
  let server: TestServer;
  let slug: string;
  let batchId: string;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' }); // no --scan-base: the listening URL, loopback
    slug = (await createNode(server)).slug;
    const batch = await server.api('POST', '/batches', { label: 'Doors', prefix: 'DR', quantity: 3, function_type: 'redirect', base_payload: { url: 'https://example.com' } });
    expect(batch.status, batch.text).toBe(201);
    batchId = batch.body.data.id;
    await waitForBatch(server, batchId, (b) => b.status === 'ready');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('GET /organization says the scan base in effect, where it comes from and who can reach it', async () => {
    const res = await server.api('GET', '/organization');
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      id: server.orgId,
      name: 'Default organization',
      scan_base: server.url,
      scan_base_source: 'instance',
      instance_scan_base: server.url,
      scan_base_reach: 'loopback',
      scan_base_updated_at: null,
    });
  });

  it('refuses the label PDF and the manifest PDF with 409 on a loopback scan base; allow_local_scan_base=true prints', async () => {
    const label = await get(server, `/nodes/${slug}/label.pdf`);
    expect(label.status).toBe(409);
    expect(label.json.data).toBeNull();
    expect(label.json.error).toMatch(SET_A_SCAN_DOMAIN);
    expect(label.json.error).toContain('allow_local_scan_base=true');
    const sheet = await get(server, `/batches/${batchId}/manifest?format=pdf`);
    expect(sheet.status).toBe(409);
    expect(sheet.json.error).toMatch(SET_A_SCAN_DOMAIN);

    const testLabel = await get(server, `/nodes/${slug}/label.pdf?allow_local_scan_base=true`);
    expect(testLabel.status).toBe(200);
    expect(testLabel.type).toBe('application/pdf');
    const testSheet = await get(server, `/batches/${batchId}/manifest?format=pdf&allow_local_scan_base=true`);
    expect(testSheet.status).toBe(200);
    expect(testSheet.type).toBe('application/pdf');
    expect((await get(server, `/nodes/${slug}/label.pdf?allow_local_scan_base=false`)).status).toBe(409);
    expect((await get(server, `/nodes/${slug}/label.pdf?allow_local_scan_base=yes`)).json).toEqual({
      data: null,
      error: 'Validation failed',
      details: { allow_local_scan_base: 'must be true or false' },
    });
    // 404 before 409: an unknown node is not a scan-domain problem.
    expect((await get(server, '/nodes/ZZZZZZZZ/label.pdf')).status).toBe(404);
  });

  it('keeps the JSON and CSV manifests, the QR endpoint and the previews available', async () => {
    expect((await get(server, `/batches/${batchId}/manifest`)).status).toBe(200);
    const csv = await get(server, `/batches/${batchId}/manifest?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.type).toContain('text/csv');
    expect((await get(server, `/nodes/${slug}/qr?format=svg`)).status).toBe(200);
    expect((await get(server, `/nodes/${slug}/label.svg`)).status).toBe(200);
    expect((await get(server, `/batches/${batchId}/preview.svg`)).status).toBe(200);
  });

  it('refuses NFC writes, single and session, with 409 unless the body allows a test tag', async () => {
    const single = await server.api('POST', '/nfc/write', { slug });
    expectError(single, 409, SET_A_SCAN_DOMAIN);
    const session = await server.api('POST', '/nfc/session', { batch_id: batchId });
    expectError(session, 409, SET_A_SCAN_DOMAIN);
    expect((await server.api('GET', '/nfc/session')).body.data).toBeNull();
    expectError(await server.api('POST', '/nfc/session', { batch_id: 'nope' }), 404, 'Batch not found'); // 404 before 409

    // Allowed: the scan base no longer stands in the way (this server has no reader: the single
    // write stops at the reader, the session starts).
    const allowedSingle = await server.api('POST', '/nfc/write', { slug, allow_local_scan_base: true });
    expect(allowedSingle.status).toBe(409);
    expect(allowedSingle.body.error).not.toMatch(/scan domain/);
    const allowedSession = await server.api('POST', '/nfc/session', { batch_id: batchId, allow_local_scan_base: true });
    expect(allowedSession.status, allowedSession.text).toBe(201);
    expect(allowedSession.body.data.next.url).toMatch(new RegExp(`^${server.url}/v/`));
    expect((await server.api('POST', '/nfc/session/stop', {})).status).toBe(200);
    expectInvalid(await server.api('POST', '/nfc/write', { slug, allow_local_scan_base: 'yes' }), 'allow_local_scan_base', 'must be true or false');
  });

  it('PATCH /organization validates scan_base: an https:// or http:// origin, or null', async () => {
    const cases: Array<[unknown, RegExp]> = [
      ['ftp://w.example.com', /must start with https:\/\/ or http:\/\//],
      ['w.example.com', /must start with https:\/\/ or http:\/\//],
      ['https://w.example.com/scan', /must be an origin only/],
      ['https://w.example.com/?x=1', /must be an origin only/],
      ['https://user:secret@w.example.com', /must not carry a user name or password/],
      ['https://', /must be an address|must name a host/],
      [42, /must be a string/],
      [`https://${'a'.repeat(200)}.example.com`, /at most 200 characters/],
    ];
    for (const [scan_base, message] of cases) expectInvalid(await server.api('PATCH', '/organization', { scan_base }), 'scan_base', message);
    expectInvalid(await server.api('PATCH', '/organization', {}), 'scan_base');
    expectInvalid(await server.api('PATCH', '/organization', { scan_base: null, name: 'x' }), 'name');
    const notJson = await fetch(`${server.url}/v1/organization`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: '{"scan_base":',
    });
    expect(notJson.status).toBe(400);
    // Nothing was stored.
    expect((await server.api('GET', '/organization')).body.data.scan_base_source).toBe('instance');
  });

  it('a scan domain set with PATCH is used by node URLs, the manifest, the QR code and the labels; null restores the default', async () => {
    const set = await server.api('PATCH', '/organization', { scan_base: 'https://W.Example.com/' });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data).toMatchObject({ scan_base: 'https://w.example.com', scan_base_source: 'organization', instance_scan_base: server.url, scan_base_reach: 'public' });
    expect(set.body.data.scan_base_updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect((await server.api('GET', '/organization')).body.data.scan_base).toBe('https://w.example.com');
    expect((await server.api('GET', '/instance')).body.data.scan_base).toBe('https://w.example.com');

    expect((await server.api('GET', `/nodes/${slug}`)).body.data.url).toBe(`https://w.example.com/v/${slug}`);
    const created = await createNode(server);
    expect(created.url).toBe(`https://w.example.com/v/${created.slug}`);
    const manifest = (await server.api('GET', `/batches/${batchId}/manifest`)).body.data.nodes as Array<{ url: string; slug: string }>;
    expect(manifest.map((n) => n.url)).toEqual(manifest.map((n) => `https://w.example.com/v/${n.slug}`));

    const label = await get(server, `/nodes/${slug}/label.pdf?layout=roll-50x50`);
    expect(label.status).toBe(200);
    const sheet = await get(server, `/batches/${batchId}/manifest?format=pdf&layout=roll-50x50`);
    expect(sheet.status).toBe(200);
    const qr = await get(server, `/nodes/${slug}/qr?format=png&size=400`);
    expect(qr.status).toBe(200);
    if (!skipRender) {
      expect(decodeAll(renderPdf(label.bytes, 200))).toEqual([[`HTTPS://W.EXAMPLE.COM/V/${slug}`]]);
      expect(decodeAll(renderPdf(sheet.bytes, 200))).toEqual(manifest.map((n) => [`HTTPS://W.EXAMPLE.COM/V/${n.slug}`]));
    }

    // The scan path answers on whatever host the request names (slugs are global).
    const scan = await fetch(`${server.url}/v/${slug}`, { redirect: 'manual', headers: { host: 'w.example.com' } });
    expect(scan.status).toBe(302);
    expect(scan.headers.get('location')).toBe('https://example.com/landing');

    const cleared = await server.api('PATCH', '/organization', { scan_base: null });
    expect(cleared.body.data).toMatchObject({ scan_base: server.url, scan_base_source: 'instance', scan_base_reach: 'loopback' });
    expect((await get(server, `/nodes/${slug}/label.pdf`)).status).toBe(409);
  });

  it('a private LAN address is allowed (reach lan: phones on the same network only)', async () => {
    const lan = await server.api('PATCH', '/organization', { scan_base: 'http://192.168.1.20:8787' });
    expect(lan.body.data).toMatchObject({ scan_base: 'http://192.168.1.20:8787', scan_base_reach: 'lan' });
    expect((await get(server, `/nodes/${slug}/label.pdf`)).status).toBe(200);
    expect((await server.api('POST', '/nfc/write', { slug })).body.error).not.toMatch(/scan domain/);
    for (const [scan_base, reach] of [
      ['http://localhost:8787', 'loopback'],
      ['http://[::1]:8787', 'loopback'],
      ['http://127.1.2.3', 'loopback'],
      ['http://10.0.0.5', 'lan'],
      ['http://waymark-box.local', 'lan'],
      ['https://w.example.com', 'public'],
    ] as const) {
      expect((await server.api('PATCH', '/organization', { scan_base })).body.data.scan_base_reach, scan_base).toBe(reach);
    }
    await server.api('PATCH', '/organization', { scan_base: null });
  });

  it("one organization's scan domain is its own", async () => {
    const other = await server.running.app.services.keys.createOrgWithKey('Other org', 'k');
    await server.api('PATCH', '/organization', { scan_base: 'https://mine.example.com' });
    const theirs = await server.api('GET', '/organization', undefined, other.apiKey);
    expect(theirs.body.data).toMatchObject({ id: other.org.id, name: 'Other org', scan_base: server.url, scan_base_source: 'instance' });
    const node = await createNode(server, 'redirect', {}, other.apiKey);
    expect(node.url).toBe(`${server.url}/v/${node.slug}`);
    await server.api('PATCH', '/organization', { scan_base: null });
  });
});
