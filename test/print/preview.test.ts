import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { CHROMIUM, needs } from '../support/system.ts';
import { type Gray, crop, decodeAll, missingTools, mmToPx, parsePng } from './raster.ts';
import { eventually } from '../support/receiver.ts';

const skipRender = needs.chromium() ?? missingTools();

const clock = new ManualClock();

const SCALE = 2;

/** Renders an SVG page in real Chromium (96 px per inch × SCALE) and returns the screenshot. */
function renderSvg(svg: string, widthMm: number, heightMm: number): Gray {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-svg-'));
  try {
    writeFileSync(join(dir, 'page.svg'), svg);
    const px = (mm: number) => Math.ceil((mm / 25.4) * 96);
    const shot = spawnSync(
      CHROMIUM,
      [
        '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--hide-scrollbars', `--force-device-scale-factor=${SCALE}`,
        `--window-size=${px(widthMm)},${px(heightMm)}`, `--screenshot=${join(dir, 'page.png')}`, `file://${join(dir, 'page.svg')}`,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (shot.status !== 0) throw new Error(`chromium failed: ${shot.stderr}`);
    return parsePng(readFileSync(join(dir, 'page.png')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function get(server: TestServer, path: string) {
  clock.advance(1000);
  const res = await fetch(`${server.url}/v1${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('SVG previews for the console', () => {
  let server: TestServer;
  let batchId: string;
  let urls: string[];
  beforeAll(async () => {
    server = await startTestServer({ clock });
    clock.advance(1000);
    const created = await server.api('POST', '/batches', { label: 'Preview', prefix: 'PV', quantity: 25, function_type: 'redirect' });
    batchId = created.body.data.id;
    await eventually(async () => {
      clock.advance(1000);
      return (await server.api('GET', `/batches/${batchId}`)).body.data.status === 'ready' ? true : undefined;
    }, 60_000, 'the batch ready');
    clock.advance(1000);
    urls = (await server.api('GET', `/batches/${batchId}/manifest`)).body.data.nodes.map((n: { url: string }) => n.url.toUpperCase());
  });
  afterAll(async () => {
    await server.close();
  });

  it('serves each page of a batch print as SVG with the page count', async () => {
    const first = await get(server, `/batches/${batchId}/preview.svg?layout=avery-l7160&start=2&cut_marks=true`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('image/svg+xml');
    expect(first.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(first.headers.get('x-page-count')).toBe('2');
    expect(first.headers.get('x-label-count')).toBe('25');
    expect(first.text).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="210mm" height="297mm" viewBox="0 0 210 297">/);
    // 21 label outlines, the 2 used ones shaded; 19 codes on page 1, 6 on page 2.
    expect(first.text.match(/<rect x=/g)).toHaveLength(21);
    expect(first.text.match(/fill="#e5e7eb"/g)).toHaveLength(2);
    expect(first.text.match(/<path /g)).toHaveLength(19);
    const second = await get(server, `/batches/${batchId}/preview.svg?layout=avery-l7160&start=2&page=2`);
    expect(second.text.match(/<path /g)).toHaveLength(6);
    expect((await get(server, `/batches/${batchId}/preview.svg?layout=avery-l7160&page=3`)).text).toBe(
      JSON.stringify({ data: null, error: 'Validation failed', details: { page: 'must be between 1 and 2 (pages in this print)' } }),
    );
    expect((await get(server, '/batches/nope/preview.svg')).status).toBe(404);
  });

  it('escapes node labels in captions', async () => {
    clock.advance(1000);
    const node = await server.api('POST', '/nodes', { label: '<script>alert(1)</script> & "Co"', function_type: 'redirect', payload: { url: 'https://example.com' } });
    const res = await get(server, `/nodes/${node.body.data.slug}/label.svg?layout=roll-50x50&caption=label`);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('<script');
    expect(res.text).toContain('&#60;script&#62;');
    expect(res.headers.get('x-page-count')).toBe('1');
  });

  // Last: the Chromium run takes seconds, long enough for idle keep-alive sockets to expire.
  it.skipIf(skipRender)('the preview shows the same codes as the PDF (rendered in Chromium, decoded with zbarimg)', { timeout: 60_000 }, async () => {
    const page = await get(server, `/batches/${batchId}/preview.svg?layout=avery-l7160`);
    const layouts = (await server.api('GET', '/layouts')).body.data;
    const image = renderSvg(page.text, 210, 297);
    const slots = layouts.find((l: { id: string }) => l.id === 'avery-l7160').slots as { x: number; y: number; width: number; height: number }[];
    // Each label's rectangle, cut out of the screenshot, holds the code of the same position in the manifest.
    const crops = slots.map((r) => crop(image, mmToPx(r, 96 * SCALE, image)));
    expect(decodeAll(crops)).toEqual(urls.slice(0, 21).map((u) => [u]));
  });
});
