import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNode, expectError, expectInvalid, validPayloads, waitForBatch } from '../support/fixtures.ts';
import { assertContract } from '../support/contract.ts';
import { type ApiResponse, type TestServer, UNLIMITED, startTestServer } from '../support/server.ts';
import { count, rows } from '../support/rows.ts';

/** POST /v1/nodes/import with a CSV body, held against the document like every other call. */
async function importCsv(server: TestServer, csv: string, query = '', key = server.apiKey): Promise<ApiResponse> {
  const path = `/v1/nodes/import${query}`;
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, body: csv });
  const text = await res.text();
  await assertContract(server.url, { method: 'POST', path }, { status: res.status, headers: res.headers, text });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

const redirectRow = (i: number) => ({ label: `Door ${i}`, function_type: 'redirect', payload: { url: `https://example.com/d/${i}` } });

/** Every node of the organization as the export shows it, by slug. */
async function exported(server: TestServer, key = server.apiKey): Promise<Map<string, Record<string, unknown>>> {
  const res = await server.api('GET', '/nodes/export?format=json', undefined, key);
  expect(res.status, res.text).toBe(200);
  return new Map((res.body.nodes as Array<Record<string, unknown>>).map((n) => [n.slug as string, n]));
}

describe('POST /v1/nodes/import and GET /v1/nodes/export', () => {
  let server: TestServer;
  let otherKey: string;
  /** An organization of its own for the round trips (the first one holds over 5,000 nodes: more than one import). */
  const trip = { key: '', orgId: '' };
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
    const keys = server.running.app.services.keys;
    const other = await keys.createOrgWithKey('Other org', 'first');
    otherKey = (await keys.createKey(other.org.id, 'other unlimited', 'enterprise', UNLIMITED)).apiKey;
    const third = await keys.createOrgWithKey('Round trips', 'first');
    trip.orgId = third.org.id;
    trip.key = (await keys.createKey(third.org.id, 'trip unlimited', 'enterprise', UNLIMITED)).apiKey;
  });
  afterAll(async () => {
    await server.close();
  });

  const nodesOf = (orgId: string) => count(server.running.store, 'SELECT COUNT(*) AS n FROM nodes WHERE org_id = ?', orgId);
  const eventsOf = (type: string) => count(server.running.store, 'SELECT COUNT(*) AS n FROM outbox_events WHERE org_id = ? AND type = ?', server.orgId, type);

  it('imports 5,000 valid JSON rows in one call, each a node with its node.created event and sync capture', async () => {
    const before = await nodesOf(server.orgId);
    const createdEvents = await eventsOf('node.created');
    const captured = await count(server.running.store, "SELECT COUNT(*) AS n FROM sync_outbox WHERE entity = 'node'");
    const res = await server.api('POST', '/nodes/import', { nodes: Array.from({ length: 5000 }, (_, i) => redirectRow(i)) });
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    expect(res.body.data).toMatchObject({ mode: 'all', dry_run: false, created: 5000, updated: 0, unchanged: 0, failed: 0, errors: [] });
    expect(res.body.data.rows).toHaveLength(5000);
    expect(res.body.data.rows[4999]).toMatchObject({ row: 5000, action: 'created' });
    expect(await nodesOf(server.orgId)).toBe(before + 5000);
    expect(await eventsOf('node.created')).toBe(createdEvents + 5000);
    expect(await count(server.running.store, "SELECT COUNT(*) AS n FROM sync_outbox WHERE entity = 'node'")).toBe(captured + 5000);
    const slug = res.body.data.rows[41].slug as string;
    const node = await server.api('GET', `/nodes/${slug}`);
    expect(node.body.data).toMatchObject({ label: 'Door 41', function_type: 'redirect', payload: { url: 'https://example.com/d/41' }, status: 'active' });
    // A bound on waiting, not on speed (npm run bench measures that): 5,000 creates on PostgreSQL
    // are 20,000 round trips, which a loaded 2-core machine stretches past the default minute.
  }, 300_000);

  it('refuses more than 5,000 rows and a body without rows', async () => {
    expectInvalid(await server.api('POST', '/nodes/import', { nodes: Array.from({ length: 5001 }, (_, i) => redirectRow(i)) }), 'nodes', /at most 5000/);
    expectInvalid(await server.api('POST', '/nodes/import', { nodes: [] }), 'nodes');
    expectInvalid(await server.api('POST', '/nodes/import', {}), 'nodes', 'is required');
  });

  it('all-or-nothing by default: one invalid row writes nothing and the 422 names each bad row and field', async () => {
    const before = await nodesOf(server.orgId);
    const res = await server.api('POST', '/nodes/import', {
      nodes: [
        redirectRow(1),
        { label: 'Bad url', function_type: 'redirect', payload: { url: 'ftp://nope' } },
        redirectRow(3),
        { function_type: 'teleport', payload: {} },
      ],
    });
    expectInvalid(res, 'rows.2.payload.url', 'must be an http or https URL');
    expect(res.body.details['rows.4.function_type']).toMatch(/must be one of/);
    expect(res.body.details['rows.4.label']).toBeUndefined(); // the row's shape fails first
    expect(Object.keys(res.body.details).some((k) => k.startsWith('rows.1.') || k.startsWith('rows.3.'))).toBe(false);
    expect(await nodesOf(server.orgId)).toBe(before);
  });

  it('?mode=partial writes the valid rows and reports the others with row, field and message', async () => {
    const before = await nodesOf(server.orgId);
    const res = await server.api('POST', '/nodes/import?mode=partial', {
      nodes: [redirectRow(1), { label: 'No payload', function_type: 'wifi' }, { label: 'Weak', function_type: 'wifi', payload: { ssid: 'Lobby', password: 'short' } }, redirectRow(4)],
    });
    expect(res.status, res.text).toBe(200);
    const report = res.body.data;
    expect(report).toMatchObject({ mode: 'partial', created: 2, failed: 2 });
    expect(report.errors).toEqual([
      { row: 2, field: 'payload', message: 'is required (or name a node to update with slug or serial)' },
      { row: 3, field: 'payload.password', message: 'must be 8 to 63 characters for WPA' },
    ]);
    expect(report.rows.map((r: { action: string }) => r.action)).toEqual(['created', 'failed', 'failed', 'created']);
    expect(await nodesOf(server.orgId)).toBe(before + 2);
  });

  it('?dry_run=true reports what would happen and writes nothing', async () => {
    const before = await nodesOf(server.orgId);
    const { slug } = await createNode(server, 'redirect');
    const res = await server.api('POST', '/nodes/import?dry_run=true', { nodes: [redirectRow(1), { slug, label: 'Renamed' }, { label: 'x', function_type: 'redirect', payload: { url: 'bad' } }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ mode: 'all', dry_run: true, created: 1, updated: 1, failed: 1 });
    expect(res.body.data.errors).toEqual([{ row: 3, field: 'payload.url', message: 'must be an http or https URL' }]);
    expect(await nodesOf(server.orgId)).toBe(before + 1);
    expect((await server.api('GET', `/nodes/${slug}`)).body.data.label).toBe('redirect node');
  });

  it('a row naming a slug updates that node (label, payload replaced, status) and records node.updated', async () => {
    const { slug } = await createNode(server, 'vcard');
    const updatedEvents = await eventsOf('node.updated');
    const res = await server.api('POST', '/nodes/import', {
      nodes: [{ slug: slug.toLowerCase(), label: 'Ada at the desk', function_type: 'vcard', payload: { first_name: 'Ada', email: 'ada@example.org' }, status: 'paused' }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ created: 0, updated: 1, rows: [{ row: 1, action: 'updated', slug }] });
    const node = (await server.api('GET', `/nodes/${slug}`)).body.data;
    // The payload is the row's, not merged into the old one: last_name, phone … are gone.
    expect(node).toMatchObject({ label: 'Ada at the desk', status: 'paused', payload: { first_name: 'Ada', email: 'ada@example.org' } });
    expect(Object.keys(node.payload).sort()).toEqual(['email', 'first_name']);
    expect(await eventsOf('node.updated')).toBe(updatedEvents + 1);
    // The same row again changes nothing: no write, no event.
    const again = await server.api('POST', '/nodes/import', { nodes: [{ slug, label: 'Ada at the desk', payload: { email: 'ada@example.org', first_name: 'Ada' } }] });
    expect(again.body.data).toMatchObject({ updated: 0, unchanged: 1 });
    expect(await eventsOf('node.updated')).toBe(updatedEvents + 1);
  });

  it('a row naming a serial updates that batch node; unknown slugs and serials are row errors', async () => {
    const batch = (await server.api('POST', '/batches', { label: 'Fair', prefix: 'FAIR', quantity: 2, function_type: 'redirect', base_payload: validPayloads.redirect })).body.data;
    await waitForBatch(server, batch.id);
    const res = await server.api('POST', '/nodes/import?mode=partial', {
      nodes: [
        { serial: 'FAIR-002', label: 'Gate B', payload: { url: 'https://example.com/gate-b' } },
        { serial: 'NOPE-001', label: 'x' },
        { slug: 'ZZZZZZZZ', label: 'x' },
        { slug: 'ZZZZZZZZ', serial: 'FAIR-001', label: 'x' },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.errors).toEqual([
      { row: 2, field: 'serial', message: 'No node with this serial in this organization' },
      { row: 3, field: 'slug', message: 'No node with this slug in this organization' },
      { row: 4, field: 'slug', message: 'No node with this slug in this organization' },
    ]);
    const manifest = (await server.api('GET', `/batches/${batch.id}/manifest`)).body.data.nodes as Array<{ serial: string; slug: string }>;
    const gate = (await server.api('GET', `/nodes/${manifest.find((n) => n.serial === 'FAIR-002')!.slug}`)).body.data;
    expect(gate).toMatchObject({ label: 'Gate B', payload: { url: 'https://example.com/gate-b' }, serial: 'FAIR-002' });
  });

  it('status and template rules of an update: PATCH statuses, the node\'s own, no template change', async () => {
    const { slug } = await createNode(server, 'redirect');
    const res = await server.api('POST', '/nodes/import?mode=partial', {
      nodes: [
        { slug, status: 'lost' },
        { slug, template_id: 'some-template' },
        { slug, status: 'retired' },
        { label: 'New lost', function_type: 'redirect', payload: validPayloads.redirect, status: 'paused' },
      ],
    });
    expect(res.body.data.errors).toEqual([
      { row: 1, field: 'status', message: "must be one of: active, paused, retired (or the node's own, active)" },
      { row: 2, field: 'template_id', message: 'cannot change on an existing node (leave it as the export wrote it)' },
      { row: 4, field: 'status', message: 'must be one of: active, draft (a new node)' },
    ]);
    expect((await server.api('GET', `/nodes/${slug}`)).body.data.status).toBe('retired');
  });

  it("org B cannot update org A's node by naming its slug or serial", async () => {
    const { slug } = await createNode(server, 'redirect');
    const before = (await server.api('GET', `/nodes/${slug}`)).body.data;
    const res = await server.api('POST', '/nodes/import?mode=partial', { nodes: [{ slug, label: 'Hijacked' }, { serial: 'FAIR-001', label: 'Hijacked' }] }, otherKey);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ updated: 0, created: 0, failed: 2 });
    expect(res.body.data.errors.map((e: { field: string }) => e.field)).toEqual(['slug', 'serial']);
    expect((await server.api('GET', `/nodes/${slug}`)).body.data).toEqual(before);
    // And its export holds only its own nodes.
    const theirs = await exported(server, otherKey);
    expect(theirs.has(slug)).toBe(false);
  });

  it('CSV: columns label, function_type, payload.<field>, template_id, status; JSON cells for links; upserts by slug', async () => {
    const template = (await server.api('POST', '/templates', { name: 'Venue', function_type: 'wifi', payload: { ssid: 'Venue', security: 'WPA2' }, locked_fields: ['ssid'] })).body.data;
    const { slug } = await createNode(server, 'redirect');
    const csv = [
      'label,function_type,payload.url,payload.title,payload.links,payload.ssid,payload.password,template_id,status,slug',
      'Menu,redirect,https://example.com/menu,,,,,,draft,',
      '"Site, with ""quotes""",microsite,,Welcome,"[{""label"":""Docs"",""url"":""https://example.com/docs""}]",,,,,',
      'Hall wifi,wifi,,,,,long-enough-password,' + template.id + ',,',
      `Renamed,,https://example.com/renamed,,,,,,paused,${slug}`,
    ].join('\r\n');
    const res = await importCsv(server, csv);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ created: 3, updated: 1, failed: 0 });
    const [menu, site, hall] = res.body.data.rows.map((r: { slug: string }) => r.slug) as string[];
    expect((await server.api('GET', `/nodes/${menu}`)).body.data).toMatchObject({ label: 'Menu', status: 'draft', payload: { url: 'https://example.com/menu' } });
    expect((await server.api('GET', `/nodes/${site}`)).body.data).toMatchObject({ label: 'Site, with "quotes"', payload: { title: 'Welcome', links: [{ label: 'Docs', url: 'https://example.com/docs' }] } });
    expect((await server.api('GET', `/nodes/${hall}`)).body.data).toMatchObject({ template_id: template.id, payload: { ssid: 'Venue', security: 'WPA2', password: 'long-enough-password' } });
    expect((await server.api('GET', `/nodes/${slug}`)).body.data).toMatchObject({ label: 'Renamed', status: 'paused', payload: { url: 'https://example.com/renamed' } });
  });

  it('CSV: an unknown column is a 422, a malformed file a 400, another content type a 400', async () => {
    expectInvalid(await importCsv(server, 'label,colour\nx,red\n'), 'header.colour', 'is not a known column');
    expectError(await importCsv(server, 'label,function_type\n"unclosed,redirect\n'), 400, /^Malformed CSV/);
    expectError(await importCsv(server, 'label,function_type\nx,redirect,extra\n'), 400, /^Malformed CSV/);
    const res = await fetch(`${server.url}/v1/nodes/import`, { method: 'POST', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'text/plain' }, body: 'label\nx' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('Request body must be JSON (Content-Type: application/json or text/csv)');
  });

  it('export → import round trip: unchanged in CSV and in JSON, formula cells guarded and given back exactly', async () => {
    const tricky = [
      { label: '=HYPERLINK("http://evil")', function_type: 'action', payload: { action_type: 'whatsapp', phone: '+33 6 12 34 56 78', message: "'=already quoted" } },
      { label: '@admin, "quoted"\nline two', function_type: 'wifi', payload: { ssid: '-dash', password: '', security: 'nopass' } },
      { label: "'plain apostrophe", function_type: 'digital_card', payload: { name: 'Ada', bio: 'Line one\r\nline two', links: [{ label: '+plus', url: 'https://example.com/x' }] } },
    ];
    const made = await server.api('POST', '/nodes/import', { nodes: tricky }, trip.key);
    expect(made.status, made.text).toBe(200);
    const before = await exported(server, trip.key);
    const nodesBefore = await rows(server.running.store, 'SELECT id, slug, label, function_type, payload_json, status, template_id, serial, updated_at FROM nodes WHERE org_id = ? ORDER BY id', trip.orgId);
    const eventsBefore = await count(server.running.store, 'SELECT COUNT(*) AS n FROM outbox_events WHERE org_id = ?', trip.orgId);

    const csv = await server.api('GET', '/nodes/export', undefined, trip.key);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="nodes.csv"');
    expect(csv.text.split('\r\n')[0]).toMatch(/^slug,serial,label,function_type,status,template_id,expires_at,max_scans,after_limit,payload\.url,/);
    // No cell starts a formula: the export put an apostrophe before = + - @.
    expect(csv.text).toContain(`'=HYPERLINK`);
    expect(csv.text).toContain(`''=already quoted`);
    expect(csv.text).toContain(`'+33 6 12 34 56 78`);

    const fromCsv = await importCsv(server, csv.text, '', trip.key);
    expect(fromCsv.status, fromCsv.text.slice(0, 500)).toBe(200);
    expect(fromCsv.body.data).toMatchObject({ created: 0, updated: 0, failed: 0, unchanged: before.size });
    const json = await server.api('GET', '/nodes/export?format=json', undefined, trip.key);
    const fromJson = await server.api('POST', '/nodes/import', json.body, trip.key);
    expect(fromJson.status, fromJson.text.slice(0, 500)).toBe(200);
    expect(fromJson.body.data).toMatchObject({ created: 0, updated: 0, failed: 0, unchanged: before.size });

    expect(await exported(server, trip.key)).toEqual(before);
    expect(await rows(server.running.store, 'SELECT id, slug, label, function_type, payload_json, status, template_id, serial, updated_at FROM nodes WHERE org_id = ? ORDER BY id', trip.orgId)).toEqual(nodesBefore);
    expect(await count(server.running.store, 'SELECT COUNT(*) AS n FROM outbox_events WHERE org_id = ?', trip.orgId)).toBe(eventsBefore);
    const [a, b, c] = made.body.data.rows.map((r: { slug: string }) => before.get(r.slug));
    expect(a).toMatchObject({ label: tricky[0]!.label, payload: tricky[0]!.payload });
    expect(b).toMatchObject({ label: tricky[1]!.label, payload: tricky[1]!.payload });
    expect(c).toMatchObject({ label: tricky[2]!.label, payload: tricky[2]!.payload });
  });

  it('an export edited in a spreadsheet and imported back updates exactly the edited rows', async () => {
    const { slug } = await createNode(server, 'redirect', { label: 'Before edit' }, trip.key);
    const csv = (await server.api('GET', '/nodes/export', undefined, trip.key)).text;
    const edited = csv.replace(`${slug},,Before edit,`, `${slug},,After edit,`);
    expect(edited).not.toBe(csv);
    const res = await importCsv(server, edited, '', trip.key);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.body.data).toMatchObject({ created: 0, updated: 1, failed: 0 });
    expect((await server.api('GET', `/nodes/${slug}`, undefined, trip.key)).body.data.label).toBe('After edit');
  });

  it('limits round trip: the export carries expires_at, max_scans and after_limit (never a password), another organization imports them; a password column sets a hash', async () => {
    const keys = server.running.app.services.keys;
    const source = await keys.createOrgWithKey('Limits source', 'first');
    const sourceKey = (await keys.createKey(source.org.id, 'unlimited', 'enterprise', UNLIMITED)).apiKey;
    const copy = await keys.createOrgWithKey('Limits copy', 'first');
    const copyKey = (await keys.createKey(copy.org.id, 'unlimited', 'enterprise', UNLIMITED)).apiKey;
    const limits = { expires_at: '2030-06-01T12:00:00+02:00', max_scans: 500, after_limit: { type: 'redirect', url: 'https://example.com/sold-out' } };
    const gated = await server.api('POST', '/nodes', { label: 'Gated', function_type: 'redirect', payload: { url: 'https://example.com/in' }, ...limits, password: 'open sesame' }, sourceKey);
    expect(gated.status, gated.text).toBe(201);
    await createNode(server, 'redirect', { label: 'Plain' }, sourceKey);

    const json = await server.api('GET', '/nodes/export?format=json', undefined, sourceKey);
    expect(json.status).toBe(200);
    const [gatedRow, plainRow] = json.body.nodes as Array<Record<string, unknown>>;
    expect(gatedRow).toMatchObject({ label: 'Gated', expires_at: '2030-06-01T10:00:00.000Z', max_scans: 500, after_limit: limits.after_limit });
    expect(plainRow).toMatchObject({ label: 'Plain', expires_at: null, max_scans: null, after_limit: null });
    expect(json.text).not.toMatch(/password/);
    const csv = await server.api('GET', '/nodes/export', undefined, sourceKey);
    expect(csv.text.split('\r\n')[0]!.split(',')).not.toContain('password');
    expect(csv.text).toContain(',2030-06-01T10:00:00.000Z,500,"{""type"":""redirect"",""url"":""https://example.com/sold-out""}",');
    // Imported back unchanged, in both forms.
    expect((await importCsv(server, csv.text, '', sourceKey)).body.data).toMatchObject({ unchanged: 2, updated: 0, failed: 0 });
    expect((await server.api('POST', '/nodes/import', json.body, sourceKey)).body.data).toMatchObject({ unchanged: 2, updated: 0, failed: 0 });

    // Into another organization: the CSV without its slug column creates nodes with the same limits.
    const withoutSlugs = csv.text.replace(/^slug,/, '').replace(/\r\n[^,\r\n]+,/g, '\r\n');
    const created = await importCsv(server, withoutSlugs, '', copyKey);
    expect(created.status, created.text.slice(0, 500)).toBe(200);
    expect(created.body.data).toMatchObject({ created: 2, failed: 0 });
    const copied = (await exported(server, copyKey)).values();
    const copiedRows = [...copied].map(({ slug: _slug, ...rest }) => rest);
    expect(copiedRows).toEqual((json.body.nodes as Array<Record<string, unknown>>).map(({ slug: _slug, ...rest }) => rest));
    const copiedGated = created.body.data.rows[0].slug as string;
    expect((await server.api('GET', `/nodes/${copiedGated}`, undefined, copyKey)).body.data).toMatchObject({ password_protected: false, max_scans: 500 });

    // A password column (import only) sets the password, stored as a hash; a bad one is a row error naming the column.
    const withPassword = await importCsv(server, `slug,password\r\n${copiedGated},open sesame\r\n`, '', copyKey);
    expect(withPassword.body.data).toMatchObject({ updated: 1, failed: 0 });
    expect((await server.api('GET', `/nodes/${copiedGated}`, undefined, copyKey)).body.data.password_protected).toBe(true);
    const [stored] = await rows(server.running.store, 'SELECT password_hash FROM nodes WHERE slug = ?', copiedGated);
    expect(stored!.password_hash).toMatch(/^scrypt\$/);
    expect(String(stored!.password_hash)).not.toContain('open sesame');
    const tooShort = await importCsv(server, `label,function_type,payload.url,max_scans,password\r\nNew,redirect,https://example.com/n,ten,abc\r\n`, '?mode=partial', copyKey);
    expect(tooShort.body.data.errors).toEqual([
      { row: 1, field: 'max_scans', message: 'must be a whole number' },
      { row: 1, field: 'password', message: 'must be at least 4 characters' },
    ]);
  });
});
