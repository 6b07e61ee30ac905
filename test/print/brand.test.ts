import { randomBytes } from 'node:crypto';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { decodeAll, missingTools, parsePng, renderPdf } from './raster.ts';

/**
 * QR codes on brand (issue 17 item 2) over HTTP: every module style × colours × logo × frame
 * decodes with zbarimg, as the QR endpoint's PNG and as a printed label (pdftoppm, then zbarimg);
 * unreadable colours are refused; logo uploads are checked; defaults apply and requests override.
 */
const skipRender = missingTools();
const SCAN_BASE = 'https://w.example.com';

/** Each request moves the clock one second on, so the per-second burst limit never trips. */
const clock = new ManualClock();

function logoPng(size = 64): Buffer {
  const png = new PNG({ width: size, height: size });
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 4;
      const inside = (x - size / 2) ** 2 + (y - size / 2) ** 2 < (size / 2 - 2) ** 2;
      png.data.set([200, 40, 40, inside ? 255 : 0], i);
    }
  }
  return PNG.sync.write(png);
}

const STYLES = ['square', 'rounded', 'dots'] as const;
const COLOURS = [
  { fg: '000000', bg: 'FFFFFF' },
  { fg: '1D3557', bg: 'F1FAEE' },
] as const;

describe('QR codes on brand', () => {
  let server: TestServer;
  let slug: string;
  let printed: string;

  async function get(path: string): Promise<{ status: number; type: string; bytes: Buffer; json: { error?: string; details?: Record<string, string> } | undefined }> {
    clock.advance(1000);
    const res = await fetch(`${server.url}/v1${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    const bytes = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? '';
    return { status: res.status, type, bytes, json: type.includes('json') ? JSON.parse(bytes.toString()) : undefined };
  }
  const api = (method: string, path: string, body?: unknown) => {
    clock.advance(1000);
    return server.api(method, path, body);
  };

  beforeAll(async () => {
    server = await startTestServer({ clock, scanBase: SCAN_BASE });
    const node = await api('POST', '/nodes', { label: 'Brand', function_type: 'redirect', payload: { url: 'https://example.com/menu' } });
    expect(node.status).toBe(201);
    slug = node.body.data.slug;
    printed = `${SCAN_BASE}/v/${slug}`.toUpperCase();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses bad logo files with 422 and keeps a good PNG and a rasterised SVG', async () => {
    const upload = (content_type: string, data: Buffer | string) => api('PUT', '/organization/qr-style/logo', { content_type, data_base64: Buffer.from(data).toString('base64') });

    const notPng = await upload('image/png', 'GIF89a this is not a png at all, really');
    expect(notPng.status).toBe(422);
    expect(notPng.body.details.data_base64).toMatch(/not a PNG/);

    // A header that claims a huge canvas is refused before anything is decoded.
    const huge = logoPng(32);
    huge.writeUInt32BE(30000, 16);
    const tooBig = await upload('image/png', huge);
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.details.data_base64).toMatch(/at most 2048/);

    const truncated = await upload('image/png', logoPng(32).subarray(0, 60));
    expect(truncated.status).toBe(422);

    const script = await upload('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');
    expect(script.status).toBe(422);
    expect(script.body.details.data_base64).toMatch(/scripts/);
    const external = await upload('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><use xlink:href="file:///etc/passwd#x"/></svg>');
    expect(external.status).toBe(422);
    const entity = await upload('image/svg+xml', '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&x;</text></svg>');
    expect(entity.status).toBe(422);
    expect((await upload('image/svg+xml', 'hello')).status).toBe(422);
    expect((await upload('image/gif', logoPng())).status).toBe(422);
    const oversize = await api('PUT', '/organization/qr-style/logo', { content_type: 'image/png', data_base64: 'A'.repeat(400_000) });
    expect(oversize.status).toBe(422);
    // Grey noise, one byte a pixel: 231 kB uploaded, ~790 kB once kept as RGBA (it must travel in one sync change).
    const noise = new PNG({ width: 480, height: 480, colorType: 0, inputColorType: 0, inputHasAlpha: false, bitDepth: 8 });
    noise.data = randomBytes(480 * 480);
    const grown = await upload('image/png', PNG.sync.write(noise, { colorType: 0, inputColorType: 0, inputHasAlpha: false }));
    expect(grown.status, grown.text).toBe(422);
    expect(grown.body.details.data_base64).toMatch(/once re-encoded.*at most 512 KiB/);
    expect((await api('GET', '/organization/qr-style')).body.data.logo_image).toBeNull();

    const svg = await upload('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 10"><rect width="20" height="10" rx="3" fill="#0a7"/></svg>');
    expect(svg.status).toBe(200);
    expect(svg.body.data.logo_image).toMatchObject({ content_type: 'image/png', uploaded_as: 'image/svg+xml', width: 512, height: 256 });

    const png = await upload('image/png', logoPng());
    expect(png.status).toBe(200);
    expect(png.body.data.logo_image).toMatchObject({ uploaded_as: 'image/png', width: 64, height: 64 });
    const stored = await get('/organization/qr-style/logo');
    expect(stored.type).toBe('image/png');
    expect(PNG.sync.read(stored.bytes).width).toBe(64);
  });

  it('refuses colours a reader may fail on with 400 naming both colours and the ratio', async () => {
    const low = await get(`/nodes/${slug}/qr?fg=777777&bg=888888`);
    expect(low.status).toBe(400);
    expect(low.json?.error).toMatch(/#777777.*#888888.*1\.\d\d:1.*at least 4\.5:1/);
    const inverted = await get(`/nodes/${slug}/qr?fg=FFFFFF&bg=000000`);
    expect(inverted.status).toBe(400);
    expect(inverted.json?.error).toMatch(/#FFFFFF.*#000000.*inverted/);
    const label = await get(`/nodes/${slug}/label.pdf?layout=roll-50x50&fg=%23999999&allow_local_scan_base=true`);
    expect(label.status).toBe(400);
    expect(label.json?.error).toMatch(/#999999 on bg #FFFFFF/);
    const defaults = await api('PATCH', '/organization/qr-style', { bg: '#202020' });
    expect(defaults.status).toBe(400);
    expect((await get(`/nodes/${slug}/qr?fg=nope`)).status).toBe(422);
    expect((await get(`/nodes/${slug}/qr?style=hexagon`)).status).toBe(422);
    expect((await get(`/nodes/${slug}/qr?frame_text=${'x'.repeat(25)}`)).status).toBe(422);
  });

  it('the frame text is escaped in the SVG', async () => {
    const svg = await get(`/nodes/${slug}/qr?format=svg&frame_text=${encodeURIComponent('<b>"Tap" & go</b>')}`);
    expect(svg.status).toBe(200);
    const text = svg.bytes.toString();
    expect(text).toContain('&#60;b&#62;&#34;Tap&#34; &#38; go&#60;/b&#62;');
    expect(text).not.toContain('<b>');
  });

  it('organization defaults apply, and per-request options override them', async () => {
    const set = await api('PATCH', '/organization/qr-style', { fg: '#1D3557', bg: '#F1FAEE', module_style: 'dots', logo: true, frame_text: 'Scan for the menu' });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ fg: '#1D3557', bg: '#F1FAEE', module_style: 'dots', logo: true, frame_text: 'Scan for the menu' });

    const withDefaults = (await get(`/nodes/${slug}/qr?format=svg`)).bytes.toString();
    expect(withDefaults).toContain('fill="#1D3557"');
    expect(withDefaults).toContain('fill="#F1FAEE"');
    expect(withDefaults).toContain('Scan for the menu');
    expect(withDefaults).toContain('href="data:image/png;base64,');
    expect(withDefaults).toMatch(/a0\.45 0\.45/); // dots

    const overridden = (await get(`/nodes/${slug}/qr?format=svg&fg=000000&bg=FFFFFF&style=square&logo=false&frame=false`)).bytes.toString();
    expect(overridden).toContain('fill="#000000"');
    expect(overridden).not.toContain('#1D3557');
    expect(overridden).not.toContain('<text');
    expect(overridden).not.toContain('<image');
    expect(overridden).not.toMatch(/a0\.45/);

    // The label preview follows the same defaults.
    const preview = (await get(`/nodes/${slug}/label.svg?layout=roll-50x50`)).bytes.toString();
    expect(preview).toContain('Scan for the menu');
    expect(preview).toContain('fill="#1D3557"');

    if (!skipRender) {
      const png = await get(`/nodes/${slug}/qr?format=png&size=480`);
      expect(decodeAll([parsePng(png.bytes)])).toEqual([[printed]]);
    }

    // Without a logo, a request for one is refused; the defaults drop it.
    expect((await api('DELETE', '/organization/qr-style/logo')).body.data).toMatchObject({ logo: false, logo_image: null });
    const noLogo = await get(`/nodes/${slug}/qr?logo=true`);
    expect(noLogo.status).toBe(422);
    expect(noLogo.json?.details?.logo).toMatch(/no logo/);
    expect((await api('PATCH', '/organization/qr-style', { logo: true })).status).toBe(422);
  });

  // Last in the file: pdftoppm and zbarimg run synchronously for seconds, and a request after them
  // could meet a keep-alive socket the server closed meanwhile (ECONNRESET), which is not under test.
  it('every style × colours × logo × frame decodes, as a PNG and in the label PDF', async ({ skip }) => {
    if (skipRender) skip(skipRender);
    // Drawing does not depend on the storage: the postgres project runs the rest of this file.
    if (process.env.WAYMARK_TEST_BACKEND === 'postgres') skip('rendering is checked once, in the sqlite project');
    const combos = STYLES.flatMap((style) => COLOURS.flatMap((c) => [false, true].flatMap((logo) => [false, true].map((frame) => ({ style, ...c, logo, frame })))));
    const query = (c: (typeof combos)[number]) => `style=${c.style}&fg=${c.fg}&bg=${c.bg}&logo=${c.logo}&frame=${c.frame}${c.frame ? `&frame_text=${encodeURIComponent('Scan <&> go')}` : ''}`;
    const logo = await api('PUT', '/organization/qr-style/logo', { content_type: 'image/png', data_base64: logoPng().toString('base64') });
    expect(logo.status).toBe(200);
    const pngs = [];
    const pdfs = [];
    for (const c of combos) {
      const png = await get(`/nodes/${slug}/qr?format=png&size=480&${query(c)}`);
      expect(png.status, query(c)).toBe(200);
      pngs.push(parsePng(png.bytes));
      const pdf = await get(`/nodes/${slug}/label.pdf?layout=roll-50x50&caption=serial&allow_local_scan_base=true&${query(c)}`);
      expect(pdf.status, query(c)).toBe(200);
      pdfs.push(pdf.bytes);
    }
    const pages = pdfs.flatMap((pdf) => renderPdf(pdf, 300));
    const fromPng = decodeAll(pngs);
    const fromPdf = decodeAll(pages);
    combos.forEach((c, i) => {
      expect(fromPng[i], `PNG ${query(c)}`).toEqual([printed]);
      expect(fromPdf[i], `PDF ${query(c)}`).toEqual([printed]);
    });
  });
});
