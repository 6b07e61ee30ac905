import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_RE, UUID_RE, expectError, expectInvalid, waitForBatch } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe('batches', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
  });
  afterAll(async () => {
    await server.close();
  });

  const createBatch = async (body: Record<string, unknown>) => {
    const res = await server.api('POST', '/batches', { label: 'Lot', function_type: 'redirect', ...body });
    expect(res.status, res.text).toBe(201);
    return res.body.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  /** Holds the generator so a batch stays `generating` until `resume`. */
  const hold = async () => {
    await server.running.app.services.generator.stop();
    return () => server.running.app.services.generator.start();
  };

  it('POST answers 201 with status generating and manifest_url null; GET polls progress to ready', async () => {
    const resume = await hold();
    const b = await createBatch({ prefix: 'SHAPE', quantity: 3 });
    expect(b.id).toMatch(UUID_RE);
    expect(b).toMatchObject({ label: 'Lot', prefix: 'SHAPE', quantity: 3, function_type: 'redirect', status: 'generating', manifest_url: null, nodes_generated: 0, nodes_written: 0, template_id: null, failure_reason: null });
    expect(b.created_at).toMatch(ISO_RE);
    expect((await server.api('GET', `/batches/${b.id}`)).body.data.status).toBe('generating');
    resume();
    const ready = await waitForBatch(server, b.id);
    expect(ready).toMatchObject({ status: 'ready', nodes_generated: 3, nodes_written: 0 });
    // manifest_url uses the origin the client reached.
    expect(ready.manifest_url).toBe(`${server.url}/v1/batches/${b.id}/manifest`);
  });

  it('numbers serials <prefix>-001… in order; a reused prefix continues the numbering', async () => {
    const a = await createBatch({ prefix: 'LOT', quantity: 3, base_payload: { url: 'https://example.com/a' } });
    // A standalone instance numbers its own serials: final, not provisional (that is a paired site offline).
    expect(a.serials_provisional).toBe(false);
    await waitForBatch(server, a.id);
    const b = await createBatch({ prefix: 'LOT', quantity: 2 });
    await waitForBatch(server, b.id);
    const list = async (id: string) => (await server.api('GET', `/nodes?batch_id=${id}`)).body;
    const na = await list(a.id);
    expect(na.total).toBe(3);
    expect(na.data.map((n: { serial: string }) => n.serial)).toEqual(['LOT-001', 'LOT-002', 'LOT-003']);
    for (const n of na.data) {
      expect(n).toMatchObject({ batch_id: a.id, status: 'in_production', function_type: 'redirect', payload: { url: 'https://example.com/a' }, label: n.serial });
    }
    const nb = await list(b.id);
    expect(nb.data.map((n: { serial: string }) => n.serial)).toEqual(['LOT-004', 'LOT-005']);
    // Without base_payload the nodes start unconfigured.
    expect(nb.data[0].payload).toEqual({});
    // A different prefix has its own numbering.
    const c = await createBatch({ prefix: 'lot', quantity: 1 });
    await waitForBatch(server, c.id);
    expect((await list(c.id)).data[0].serial).toBe('lot-001');
  });

  it('validates the create body', async () => {
    const ok = { label: 'L', prefix: 'P', quantity: 1, function_type: 'redirect' };
    const post = (over: Record<string, unknown>) => server.api('POST', '/batches', { ...ok, ...over });
    for (const quantity of [0, 501, 1.5, '10', -1]) expectInvalid(await post({ quantity }), 'quantity');
    for (const function_type of ['digital_card', 'action', 'teleport']) expectInvalid(await post({ function_type }), 'function_type', /redirect, vcard, wifi, microsite/);
    for (const prefix of ['', 'has space', 'x'.repeat(33), 'é', 'a/b']) expectInvalid(await post({ prefix }), 'prefix');
    expectInvalid(await post({ base_payload: { url: 'ftp://x' } }), 'base_payload.url');
    expectInvalid(await post({ base_payload: { nope: 1 } }), 'base_payload.nope');
    expectInvalid(await post({ function_type: 'wifi', base_payload: { ssid: 'x' } }), 'base_payload.password');
    expectInvalid(await post({ base_payload: [] }), 'base_payload');
    expectInvalid(await post({ template_id: 'missing' }), 'template_id', 'Template not found');
    const missing = await server.api('POST', '/batches', {});
    for (const f of ['label', 'prefix', 'quantity', 'function_type']) expectInvalid(missing, f, 'is required');
    const max = await post({ quantity: 500, prefix: 'MAX' });
    expect(max.status).toBe(201);
    expect((await waitForBatch(server, max.body.data.id)).nodes_generated).toBe(500);
  });

  it('lists batches newest first, filters by status and paginates', async () => {
    const resume = await hold();
    const pending = await createBatch({ prefix: 'LIST', quantity: 1 });
    const all = await server.api('GET', '/batches');
    expect(all.status).toBe(200);
    expect(all.body.data[0].id).toBe(pending.id);
    expect(all.body.total).toBe(all.body.data.length);
    const generating = await server.api('GET', '/batches?status=generating');
    expect(generating.body.data.map((b: { id: string }) => b.id)).toEqual([pending.id]);
    expect(generating.body.total).toBe(1);
    resume();
    await waitForBatch(server, pending.id);
    const page = await server.api('GET', '/batches?limit=1&offset=1');
    expect(page.body.data).toHaveLength(1);
    expect(page.body.data[0].id).toBe(all.body.data[1].id);
    expect(page.body.data[0]).toHaveProperty('created_at');
    expectInvalid(await server.api('GET', '/batches?limit=101'), 'limit');
    expectInvalid(await server.api('GET', '/batches?status=done'), 'status');
  });

  it('manifest is 409 until ready, then JSON and CSV in serial order', async () => {
    const resume = await hold();
    const b = await createBatch({ prefix: 'MAN', quantity: 12, base_payload: { url: 'https://example.com/m' } });
    expectError(await server.api('GET', `/batches/${b.id}/manifest`), 409, /not ready/);
    expectError(await server.api('GET', `/batches/${b.id}/manifest?format=csv`), 409, /not ready/);
    resume();
    await waitForBatch(server, b.id);
    const json = await server.api('GET', `/batches/${b.id}/manifest`);
    expect(json.status).toBe(200);
    expect(Object.keys(json.body.data).sort()).toEqual(['batch', 'nodes']);
    expect(json.body.data.batch.id).toBe(b.id);
    const rows = json.body.data.nodes as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.serial)).toEqual(Array.from({ length: 12 }, (_, i) => `MAN-${String(i + 1).padStart(3, '0')}`));
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual(['hardware_id', 'id', 'serial', 'slug', 'status', 'tag_protection', 'url']);
      expect(r.tag_protection).toBeNull(); // no tag written yet
      expect(r.url).toBe(`${server.url}/v/${r.slug}`);
      expect(r.status).toBe('in_production');
    }
    const csv = await server.api('GET', `/batches/${b.id}/manifest?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = csv.text.trimEnd().split(/\r\n/);
    expect(lines[0]).toBe('serial,slug,url,id,status,hardware_id,tag_protection');
    expect(lines).toHaveLength(13);
    lines.slice(1).forEach((line, i) => {
      expect(line).toBe(`${rows[i]!.serial},${rows[i]!.slug},${rows[i]!.url},${rows[i]!.id},in_production,,`);
    });
    expectInvalid(await server.api('GET', `/batches/${b.id}/manifest?format=xml`), 'format');
  });

  it('status transitions: ready → writing → deployed via PATCH (activating nodes); illegal moves are 409', async () => {
    const resume = await hold();
    const b = await createBatch({ prefix: 'FLOW', quantity: 2, base_payload: { url: 'https://example.com/f' } });
    expectError(await server.api('PATCH', `/batches/${b.id}`, { status: 'writing' }), 409, /generating/);
    expectError(await server.api('PATCH', `/batches/${b.id}`, { status: 'deployed' }), 409);
    resume();
    await waitForBatch(server, b.id);
    const writing = await server.api('PATCH', `/batches/${b.id}`, { status: 'writing', label: 'Renamed' });
    expect(writing.status).toBe(200);
    expect(writing.body.data).toMatchObject({ status: 'writing', label: 'Renamed' });
    const deployed = await server.api('PATCH', `/batches/${b.id}`, { status: 'deployed' });
    expect(deployed.body.data.status).toBe('deployed');
    const nodes = (await server.api('GET', `/nodes?batch_id=${b.id}`)).body.data;
    for (const n of nodes) expect(n.status).toBe('active');
    expectError(await server.api('PATCH', `/batches/${b.id}`, { status: 'writing' }), 409, /deployed/);
    for (const status of ['ready', 'failed', 'generating', 'pending', 'shipped']) {
      expectInvalid(await server.api('PATCH', `/batches/${b.id}`, { status }), 'status');
    }
    // ready → deployed directly is allowed too.
    const c = await createBatch({ prefix: 'FLOW', quantity: 1 });
    await waitForBatch(server, c.id);
    expect((await server.api('PATCH', `/batches/${c.id}`, { status: 'deployed' })).body.data.status).toBe('deployed');
  });

  it('retry is 409 unless the batch failed; a retried batch completes without duplicating serials', async () => {
    const ready = await createBatch({ prefix: 'RTY', quantity: 1 });
    await waitForBatch(server, ready.id);
    expectError(await server.api('POST', `/batches/${ready.id}/retry`), 409, /failed/);

    const resume = await hold();
    const b = await createBatch({ prefix: 'RTY', quantity: 120, base_payload: { url: 'https://example.com/r' } });
    // Generate one chunk, then fail the batch as a generation error would.
    await server.running.app.services.batches.generateChunk(b.id, 50);
    await server.running.app.services.batches.fail(b.id, 'disk full');
    const failed = (await server.api('GET', `/batches/${b.id}`)).body.data;
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'disk full', nodes_generated: 50, manifest_url: null });
    expectError(await server.api('GET', `/batches/${b.id}/manifest`), 409);
    expectError(await server.api('PATCH', `/batches/${b.id}`, { status: 'deployed' }), 409);
    const retried = await server.api('POST', `/batches/${b.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ status: 'generating', failure_reason: null });
    resume();
    const done = await waitForBatch(server, b.id);
    expect(done).toMatchObject({ status: 'ready', nodes_generated: 120 });
    const manifest = (await server.api('GET', `/batches/${b.id}/manifest`)).body.data.nodes as Array<{ serial: string }>;
    expect(manifest.map((r) => r.serial)).toEqual(Array.from({ length: 120 }, (_, i) => `RTY-${String(i + 2).padStart(3, '0')}`));
  });

  it('unknown batches are 404 Batch not found everywhere', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expectError(await server.api('GET', `/batches/${id}`), 404, 'Batch not found');
    expectError(await server.api('PATCH', `/batches/${id}`, { label: 'x' }), 404, 'Batch not found');
    expectError(await server.api('POST', `/batches/${id}/retry`), 404, 'Batch not found');
    expectError(await server.api('GET', `/batches/${id}/manifest`), 404, 'Batch not found');
  });
});
