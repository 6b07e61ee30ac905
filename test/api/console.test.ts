import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../server/app.ts';
import { type RunningServer, startServer } from '../../server/serve.ts';
import { apiRequest } from '../support/server.ts';

const quiet: Logger = { info: () => {}, error: (m, err) => console.error(m, err) };

async function serve(consoleDir: string): Promise<{ running: RunningServer; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'waymark-console-'));
  const running = await startServer({ host: '127.0.0.1', port: 0, dataDir, consoleDir, logger: quiet });
  return { running, dataDir };
}

describe('the console at /console/', () => {
  let built: string;
  let s: { running: RunningServer; dataDir: string };
  beforeAll(async () => {
    built = mkdtempSync(join(tmpdir(), 'waymark-console-build-'));
    mkdirSync(join(built, 'assets'));
    writeFileSync(join(built, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/console/assets/app-abc123.js"></script>');
    writeFileSync(join(built, 'assets', 'app-abc123.js'), 'console.log(1)');
    s = await serve(built);
  });
  afterAll(async () => {
    await s.running.close();
    rmSync(s.dataDir, { recursive: true, force: true });
    rmSync(built, { recursive: true, force: true });
  });

  it('serves index.html with a strict CSP, revalidated', async () => {
    const res = await fetch(`${s.running.url}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).toContain('<title>console</title>');
  });

  it('redirects /console to /console/ and answers client-side routes with index.html', async () => {
    const bare = await fetch(`${s.running.url}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/console/');
    const deep = await fetch(`${s.running.url}/console/nodes/ABCD2345?type=wifi`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<title>console</title>');
  });

  it('caches hashed assets for a year and 404s missing ones', async () => {
    const asset = await fetch(`${s.running.url}/console/assets/app-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    const missing = await fetch(`${s.running.url}/console/assets/nope-123.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
  });

  it('never serves files outside the build', async () => {
    for (const path of ['/console/..%2f..%2fpackage.json', '/console/assets/..%2f..%2f..%2fetc%2fpasswd', '/console/%2e%2e/%2e%2e/package.json']) {
      const res = await fetch(`${s.running.url}${path}`);
      const text = await res.text();
      expect(text).not.toContain('"dependencies"');
      expect(text).not.toContain('root:');
    }
  });
});

describe('a server without a console build', () => {
  it('answers /console/ with a page saying how to build it', async () => {
    const s = await serve(join(tmpdir(), 'waymark-no-such-build'));
    try {
      const res = await fetch(`${s.running.url}/console/`);
      expect(res.status).toBe(503);
      const html = await res.text();
      expect(html).toContain('npm run build:console');
      expect(res.headers.get('cache-control')).toBe('no-store');
      // The API is unaffected.
      expect((await fetch(`${s.running.url}/healthz`)).status).toBe(200);
    } finally {
      await s.running.close();
      rmSync(s.dataDir, { recursive: true, force: true });
    }
  });
});

describe('GET /v1/instance and the desktop session key', () => {
  let s: { running: RunningServer; dataDir: string };
  beforeAll(async () => {
    s = await serve(join(tmpdir(), 'waymark-no-such-build'));
  });
  afterAll(async () => {
    await s.running.close();
    rmSync(s.dataDir, { recursive: true, force: true });
  });

  it('describes the instance to an authenticated caller only', async () => {
    const key = s.running.firstRun!.apiKey;
    expect((await apiRequest(s.running.url, 'GET', '/instance', undefined, null)).status).toBe(401);
    const res = await apiRequest(s.running.url, 'GET', '/instance', undefined, key);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      server_url: s.running.url,
      api_base: `${s.running.url}/v1`,
      scan_base: s.running.url,
      data_dir: s.dataDir,
      organization: { id: s.running.firstRun!.orgId, name: 'Default organization' },
      key: { plan: 'developer', admin: true },
    });
    expect(res.body.data.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('rotates the desktop session key: a new start revokes the previous one', async () => {
    const keys = s.running.app.services.keys;
    const first = await keys.startSessionKey('Desktop app session');
    expect(first.key.plan).toBe('enterprise');
    expect((await apiRequest(s.running.url, 'GET', '/instance', undefined, first.apiKey)).status).toBe(200);
    const second = await keys.startSessionKey('Desktop app session');
    expect((await apiRequest(s.running.url, 'GET', '/instance', undefined, first.apiKey)).status).toBe(401);
    expect((await apiRequest(s.running.url, 'GET', '/instance', undefined, second.apiKey)).status).toBe(200);
    await keys.endSessionKeys('Desktop app session', second.key.org_id);
    expect((await apiRequest(s.running.url, 'GET', '/instance', undefined, second.apiKey)).status).toBe(401);
    // Other keys are untouched.
    expect((await apiRequest(s.running.url, 'GET', '/instance', undefined, s.running.firstRun!.apiKey)).status).toBe(200);
  });
});
