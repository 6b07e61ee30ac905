import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { crop, decodeAll, missingTools, mmToPx, renderPdf } from './raster.ts';
import { eventually } from '../support/receiver.ts';

const skipRender = missingTools();
const DPI = 200;

/**
 * The rate limiter's windows follow the injected clock: each request moves it one second on,
 * so the developer plan's per-second burst never trips these tests.
 */
const clock = new ManualClock();
function tick(server: TestServer) {
  clock.advance(1000);
  return server;
}

async function getPdf(server: TestServer, path: string) {
  tick(server);
  const res = await fetch(`${server.url}/v1${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(bytes.toString()) : undefined };
}

/** The PDF without its creation dates and file id (the clock moves between requests). */
function sameContent(a: Buffer, b: Buffer): boolean {
  const strip = (x: Buffer) =>
    x
      .toString('latin1')
      .replace(/\(D:\d{14}Z\)/g, '')
      .replace(/\/ID \[[^\]]*\]/, '');
  return strip(a) === strip(b);
}

async function waitReady(server: TestServer, id: string) {
  await eventually(async () => ((await tick(server).api('GET', `/batches/${id}`)).body.data.status === 'ready' ? true : undefined), 60_000, `batch ${id} ready`);
}

describe('printing over HTTP', () => {
  let server: TestServer;
  let batchId: string;
  beforeAll(async () => {
    server = await startTestServer({ clock });
  });
  afterAll(async () => {
    await server.close();
  });

  it('lists the shipped layouts with their label rectangles', async () => {
    const res = await tick(server).api('GET', '/layouts');
    expect(res.status).toBe(200);
    const ids = res.body.data.map((l: { id: string }) => l.id);
    expect(ids).toEqual(['a4-grid-40', 'avery-5160', 'avery-l7160', 'roll-25x25', 'roll-50x50']);
    expect(res.body.total).toBe(5);
    const l7160 = res.body.data.find((l: { id: string }) => l.id === 'avery-l7160');
    expect(l7160).toMatchObject({ kind: 'sheet', page: { width: 210, height: 297 }, columns: 3, rows: 7, labels_per_page: 21 });
    expect(l7160.slots).toHaveLength(21);
    expect(l7160.slots[4]).toEqual({ x: 7.25 + 63.5 + 2.54, y: 15.15 + 38.1, width: 63.5, height: 38.1 });
  });

  it('answers 409 while the batch is generating, then the PDF once it is ready', async () => {
    await server.running.app.stop(); // hold the generator so the batch stays `generating`
    const created = await tick(server).api('POST', '/batches', { label: 'Print run', prefix: 'PR', quantity: 25, function_type: 'redirect', base_payload: { url: 'https://example.com' } });
    expect(created.status).toBe(201);
    batchId = created.body.data.id;
    const early = await getPdf(server, `/batches/${batchId}/manifest?format=pdf&layout=avery-l7160`);
    expect(early.status).toBe(409);
    expect(early.json).toEqual({ data: null, error: 'Manifest not ready: batch is generating' });
    server.running.app.start();
    await waitReady(server, batchId);

    const res = await getPdf(server, `/batches/${batchId}/manifest?format=pdf&layout=avery-l7160&caption=serial&cut_marks=true&start=3`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="PR-labels-avery-l7160.pdf"');
    expect(res.headers.get('x-label-count')).toBe('25');
    expect(res.headers.get('x-page-count')).toBe('2');
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it.skipIf(skipRender)('the batch sheet decodes, in reading order, to the manifest URLs (upper case)', async () => {
    const manifest = await tick(server).api('GET', `/batches/${batchId}/manifest`);
    const urls: string[] = manifest.body.data.nodes.map((n: { url: string }) => n.url);
    expect(urls).toHaveLength(25);
    const layouts = (await tick(server).api('GET', '/layouts')).body.data;
    const layout = layouts.find((l: { id: string }) => l.id === 'avery-l7160');
    const res = await getPdf(server, `/batches/${batchId}/manifest?format=pdf&layout=avery-l7160&start=3`);
    const pages = renderPdf(res.bytes, DPI);
    expect(pages).toHaveLength(2);
    const crops = urls.map((_, i) => {
      const position = 3 + i;
      const page = pages[Math.floor(position / 21)]!;
      return crop(page, mmToPx(layout.slots[position % 21], DPI, page));
    });
    expect(decodeAll(crops)).toEqual(urls.map((u) => [u.toUpperCase()]));
  });

  it('survives a client that hangs up in the middle of a PDF', async () => {
    const big = await tick(server).api('POST', '/batches', { label: 'Big', prefix: 'BIG', quantity: 500, function_type: 'redirect' });
    await waitReady(server, big.body.data.id);
    const aborter = new AbortController();
    tick(server);
    const res = await fetch(`${server.url}/v1/batches/${big.body.data.id}/manifest?format=pdf&layout=roll-25x25`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
      signal: aborter.signal,
    });
    expect(res.status).toBe(200);
    await res.body!.getReader().read(); // the first bytes are out: the server is mid-stream
    aborter.abort();
    // The server keeps serving (an unhandled stream error would have ended the process).
    const again = await getPdf(server, `/batches/${big.body.data.id}/manifest?format=pdf&layout=avery-l7160`);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-label-count')).toBe('500');
    expect(again.bytes.subarray(-6).toString()).toContain('%%EOF');
  });

  it.skipIf(skipRender)('captions: serial, slug or the node label, in serial order', async () => {
    const manifest = (await tick(server).api('GET', `/batches/${batchId}/manifest`)).body.data.nodes as { serial: string; slug: string }[];
    await tick(server).api('PATCH', `/nodes/${manifest[1]!.slug}`, { label: 'Boiler room' });
    const words = async (caption: string) => {
      const pdf = await getPdf(server, `/batches/${batchId}/manifest?format=pdf&layout=avery-l7160&caption=${caption}`);
      return spawnSync('pdftotext', ['-layout', '-', '-'], { input: pdf.bytes, encoding: 'utf8' }).stdout.split(/\s{2,}|\n/).map((w) => w.trim()).filter(Boolean);
    };
    expect(await words('serial')).toEqual(manifest.map((n) => n.serial));
    expect(await words('slug')).toEqual(manifest.map((n) => n.slug));
    expect(await words('label')).toEqual(manifest.map((n, i) => (i === 1 ? 'Boiler room' : n.serial)));
  });

  it('refuses bad print options with 422 and details', async () => {
    const cases: [string, Record<string, string>][] = [
      ['layout=nope', { layout: 'unknown layout; one of: a4-grid-40, avery-5160, avery-l7160, roll-25x25, roll-50x50' }],
      ['caption=serials', { caption: 'must be one of: serial, slug, label, none' }],
      ['cut_marks=maybe', { cut_marks: 'must be true or false' }],
      ['offset_x=abc', { offset_x: 'must be a number of millimetres, e.g. -0.5' }],
      ['offset_y=10.5', { offset_y: 'must be at most 10' }],
      ['start=-1', { start: 'must be a whole number' }],
      ['start=21', { start: 'must be between 0 and 20 for avery-l7160 (21 labels per sheet)' }],
      ['colour=red', { colour: 'is not a known field' }],
    ];
    for (const [query, details] of cases) {
      const res = await getPdf(server, `/batches/${batchId}/manifest?format=pdf&${query}`);
      expect(res.status, query).toBe(422);
      expect(res.json, query).toEqual({ data: null, error: 'Validation failed', details });
    }
    const node = await tick(server).api('POST', '/nodes', { label: 'Gate', function_type: 'redirect', payload: { url: 'https://example.com' } });
    const res = await getPdf(server, `/nodes/${node.body.data.slug}/label.pdf?layout=roll-50x50&start=1`);
    expect(res.json).toEqual({ data: null, error: 'Validation failed', details: { start: 'must be 0 for roll-50x50 (one label per page)' } });
  });

  it('keeps JSON and CSV manifests as they were', async () => {
    expect((await tick(server).api('GET', `/batches/${batchId}/manifest`)).body.data.nodes).toHaveLength(25);
    const csv = await tick(server).api('GET', `/batches/${batchId}/manifest?format=csv`);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.text.trim().split('\n')).toHaveLength(26);
  });

  it('prints a single node label; unknown node is 404', async ({ skip }) => {
    const node = await tick(server).api('POST', '/nodes', { label: 'Front door', function_type: 'redirect', payload: { url: 'https://example.com' } });
    const { slug, url } = node.body.data;
    const res = await getPdf(server, `/nodes/${slug.toLowerCase()}/label.pdf?layout=roll-50x50&caption=label`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-length')).toBe(String(res.bytes.length));
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="${slug}-label-roll-50x50.pdf"`);
    const missing = await getPdf(server, '/nodes/ZZZZZZZZ/label.pdf');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ data: null, error: 'Node not found' });
    const noKey = await fetch(`${server.url}/v1/nodes/${slug}/label.pdf`);
    expect(noKey.status).toBe(401);
    if (skipRender) return skip(skipRender);
    expect(decodeAll(renderPdf(res.bytes, DPI))).toEqual([[url.toUpperCase()]]);
  });

  it('serves a calibration page per layout', async ({ skip }) => {
    const res = await getPdf(server, '/layouts/avery-5160/calibration.pdf?offset_x=-1.25&offset_y=0.5');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="calibration-avery-5160.pdf"');
    expect((await getPdf(server, '/layouts/nope/calibration.pdf')).json).toEqual({ data: null, error: 'Not found' });
    expect((await getPdf(server, '/layouts/avery-5160/calibration.pdf?offset_x=20')).json).toEqual({
      data: null,
      error: 'Validation failed',
      details: { offset_x: 'must be at most 10' },
    });
    if (skipRender) return skip(skipRender);
    expect(renderPdf(res.bytes, 50)).toHaveLength(1);
  });

  it('keeps printer profiles and prints with their offsets and layout', async ({ skip }) => {
    const created = await tick(server).api('POST', '/printers', { name: 'Office laser, tray 2', layout: 'a4-grid-40', offset_x: 1.5, offset_y: -2 });
    expect(created.status).toBe(201);
    const printer = created.body.data;
    expect(printer).toMatchObject({ name: 'Office laser, tray 2', layout: 'a4-grid-40', offset_x: 1.5, offset_y: -2 });
    expect(Object.keys(printer).sort()).toEqual(['created_at', 'id', 'layout', 'name', 'offset_x', 'offset_y', 'updated_at']);
    expect((await tick(server).api('GET', `/printers/${printer.id}`)).body.data).toEqual(printer);
    const list = await tick(server).api('GET', '/printers');
    expect(list.body.total).toBe(1);

    // Printing with the profile: its layout and offsets apply …
    const node = await tick(server).api('POST', '/nodes', { label: 'Valve', function_type: 'redirect', payload: { url: 'https://example.com' } });
    const { slug, url } = node.body.data;
    const withPrinter = await getPdf(server, `/nodes/${slug}/label.pdf?printer=${printer.id}&caption=none`);
    expect(withPrinter.status).toBe(200);
    expect(withPrinter.headers.get('content-disposition')).toContain('-label-a4-grid-40.pdf');
    // … and give the same PDF as the explicit options.
    const explicit = await getPdf(server, `/nodes/${slug}/label.pdf?layout=a4-grid-40&offset_x=1.5&offset_y=-2&caption=none`);
    expect(sameContent(withPrinter.bytes, explicit.bytes)).toBe(true);
    const unshifted = await getPdf(server, `/nodes/${slug}/label.pdf?layout=a4-grid-40&caption=none`);
    expect(sameContent(withPrinter.bytes, unshifted.bytes)).toBe(false);
    // Request values win over the profile.
    const override = await getPdf(server, `/nodes/${slug}/label.pdf?printer=${printer.id}&layout=a4-grid-40&offset_x=0&offset_y=0&caption=none`);
    expect(sameContent(override.bytes, unshifted.bytes)).toBe(true);

    const patched = await tick(server).api('PATCH', `/printers/${printer.id}`, { offset_x: 0.25, layout: null });
    expect(patched.body.data).toMatchObject({ offset_x: 0.25, offset_y: -2, layout: null });
    expect((await tick(server).api('PATCH', `/printers/${printer.id}`, { layout: 'nope' })).body).toEqual({
      data: null,
      error: 'Validation failed',
      details: { layout: 'unknown layout; one of: a4-grid-40, avery-5160, avery-l7160, roll-25x25, roll-50x50' },
    });
    expect((await tick(server).api('POST', '/printers', { name: 'x', offset_x: 12, colour: 1 })).body.details).toEqual({
      offset_x: 'must be at most 10',
      colour: 'is not a known field',
    });
    expect((await getPdf(server, `/nodes/${slug}/label.pdf?printer=nope`)).json).toEqual({ data: null, error: 'Validation failed', details: { printer: 'Printer not found' } });
    expect((await tick(server).api('DELETE', `/printers/${printer.id}`)).body).toEqual({ data: { deleted: true, id: printer.id } });
    expect((await tick(server).api('GET', `/printers/${printer.id}`)).body).toEqual({ data: null, error: 'Not found' });
    // The profile's offsets, seen on paper: the code sits in the shifted slot.
    if (skipRender) return skip(skipRender);
    const [page] = renderPdf(withPrinter.bytes, DPI);
    const first = (await tick(server).api('GET', '/layouts')).body.data.find((l: { id: string }) => l.id === 'a4-grid-40').slots[0];
    const shifted = { ...first, x: first.x + 1.5, y: first.y - 2 };
    expect(decodeAll([crop(page!, mmToPx(shifted, DPI, page!))])).toEqual([[url.toUpperCase()]]);
  });

  it('documents the print routes in /v1/openapi.json', async () => {
    const doc = (await tick(server).api('GET', '/v1/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/layouts', '/layouts/{id}/calibration.pdf', '/nodes/{slug}/label.pdf', '/batches/{id}/manifest', '/printers', '/printers/{id}']));
    const manifest = doc.paths['/batches/{id}/manifest'].get;
    expect(manifest.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['format', 'layout', 'printer', 'caption', 'cut_marks', 'offset_x', 'offset_y', 'start']));
    expect(Object.keys(manifest.responses['200'].content)).toContain('application/pdf');
  });
});

describe('a label too small for the scan URL', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ clock, scanBase: 'https://scan.a-rather-long-customer-domain.example.com/track/field/assets' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('is refused with 422 naming the layout; a larger layout prints', async () => {
    const node = await tick(server).api('POST', '/nodes', { label: 'Pump 4', function_type: 'redirect', payload: { url: 'https://example.com' } });
    const { slug } = node.body.data;
    const res = await getPdf(server, `/nodes/${slug}/label.pdf?layout=roll-25x25`);
    expect(res.status).toBe(422);
    expect(res.json.error).toMatch(/^Layout roll-25x25: the 25 × 25 mm label is too small for the scan URL HTTPS:\/\/SCAN\.A-RATHER-LONG-CUSTOMER-DOMAIN\.EXAMPLE\.COM\/track\/field\/assets\/V\//);
    expect(res.json.details).toEqual({ layout: res.json.error });
    const ok = await getPdf(server, `/nodes/${slug}/label.pdf?layout=roll-50x50`);
    expect(ok.status).toBe(200);
  });
});
