/**
 * Compressed answers over real HTTP: the scan pages (raw handler, bytes cached per page), the API
 * and the console's files (Express, `compression`), never an event stream; and the favicon.
 */
import { get, type IncomingMessage } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Raw {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A GET with exactly these headers, the body as sent on the wire (Node's fetch would decode it). */
function raw(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function decode(r: Raw): string {
  const enc = r.headers['content-encoding'];
  return (enc === 'br' ? brotliDecompressSync(r.body) : enc === 'gzip' ? gunzipSync(r.body) : r.body).toString('utf8');
}

describe('compression and favicon', () => {
  let server: TestServer;
  let consoleDir: string;
  beforeAll(async () => {
    consoleDir = mkdtempSync(join(tmpdir(), 'waymark-console-build-'));
    mkdirSync(join(consoleDir, 'assets'));
    writeFileSync(join(consoleDir, 'index.html'), `<!doctype html><title>console</title>${'<p>padding</p>'.repeat(200)}`);
    writeFileSync(join(consoleDir, 'assets', 'app-abc123.js'), `console.log(${JSON.stringify('x'.repeat(4000))})`);
    server = await startTestServer({ limits: 'unlimited', consoleDir });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(consoleDir, { recursive: true, force: true });
  });

  it('scan pages: brotli or gzip as the client accepts, the same page once decoded, Vary set', async () => {
    const node = (await server.api('POST', '/nodes', { label: 'Card', function_type: 'digital_card', payload: { name: 'Grace Hopper', bio: 'Compilers.', email: 'grace@example.com' } })).body.data;
    const url = `${server.url}/v/${node.slug}`;
    const plain = await raw(url);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    const html = plain.body.toString('utf8');
    expect(html).toContain('Grace Hopper');

    const br = await raw(url, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(plain.body.length / 2);
    expect(decode(br)).toBe(html);

    const gz = await raw(url, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(decode(gz)).toBe(html);

    // Status pages too (an unknown code).
    const unknown = await raw(`${server.url}/v/ZZZZZZZZ`, { 'accept-encoding': 'br' });
    expect(unknown.status).toBe(404);
    expect(decode(unknown)).toContain('We could not find this code');
  });

  it('scan pages declare the favicon inline, allowed by their CSP', async () => {
    const node = (await server.api('POST', '/nodes', { label: 'Wi-Fi', function_type: 'wifi', payload: { ssid: 'Guests', password: 'correct horse', security: 'WPA2' } })).body.data;
    const page = await raw(`${server.url}/v/${node.slug}`);
    expect(page.body.toString('utf8')).toMatch(/<link rel="icon" type="image\/svg\+xml" href="data:image\/svg\+xml,%3Csvg/);
    expect(page.headers['content-security-policy']).toContain('img-src data:');
  });

  it('the API answers compressed JSON; the favicon is served', async () => {
    const doc = await raw(`${server.url}/v1/openapi.json`, { 'accept-encoding': 'br' });
    expect(doc.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decode(doc)).openapi).toMatch(/^3\./);
    for (let i = 0; i < 5; i++) await server.api('POST', '/nodes', { label: `Door ${i}`, function_type: 'redirect', payload: { url: 'https://example.com/menu' } });
    const gz = await raw(`${server.url}/v1/nodes?limit=100`, { 'accept-encoding': 'gzip', authorization: `Bearer ${server.apiKey}` });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decode(gz)).data.length).toBeGreaterThan(0);

    const icon = await raw(`${server.url}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(icon.body.toString('utf8')).toMatch(/^<svg /);
    const ico = await raw(`${server.url}/favicon.ico`);
    expect(ico.status).toBe(301);
    expect(ico.headers.location).toBe('/favicon.svg');
  });

  it("the console's page and files are compressed", async () => {
    const index = await raw(`${server.url}/console/nodes`, { 'accept-encoding': 'gzip, br' });
    expect(index.headers['content-encoding']).toBe('br');
    expect(decode(index)).toContain('<title>console</title>');
    const js = await raw(`${server.url}/console/assets/app-abc123.js`, { 'accept-encoding': 'gzip' });
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(decode(js)).toMatch(/^console\.log/);
  });

  it('an event stream is never compressed (each event must leave at once)', async () => {
    const body = await new Promise<{ encoding: string | undefined; first: string }>((resolve, reject) => {
      const req = get(`${server.url}/v1/nfc/events`, { headers: { 'accept-encoding': 'gzip, br', authorization: `Bearer ${server.apiKey}` } }, (res) => {
        res.once('data', (c: Buffer) => {
          resolve({ encoding: res.headers['content-encoding'], first: c.toString('utf8') });
          req.destroy();
        });
      });
      req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    });
    expect(body.encoding).toBeUndefined();
    expect(body.first).toMatch(/^event: reader\n/);
  });
});
