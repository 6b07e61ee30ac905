/**
 * Scan pages in real Chromium at a phone's size: no CSP violation (the hashed style and script
 * apply), no horizontal scrolling, the Copy button is live, and the Wi-Fi page's QR code, read
 * back from a screenshot with zbarimg, is the escaped WIFI: string.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { chromium, type Browser } from '@playwright/test';
import { startTestServer, type TestServer } from '../support/server.ts';
import { CHROMIUM, needs } from '../support/system.ts';

const noZbar = needs.zbar();

describe.skipIf(needs.chromium())('scan pages in Chromium', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // wifi.lan: the same server under a LAN-style name, which (unlike 127.0.0.1) is not a secure origin on plain http.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP wifi.lan 127.0.0.1'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  function create(function_type: string, payload: Record<string, unknown>) {
    return server.running.app.services.nodes.create(server.orgId, { label: 'Page', function_type, payload } as never);
  }

  async function open(slug: string, origin = server.url) {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, acceptDownloads: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    const response = await page.goto(`${origin}/v/${slug}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    return { context, page, problems, response, overflow };
  }

  it('every page type renders under its CSP without horizontal scrolling', async () => {
    const long = 'A-very-long-unbroken-word-that-should-wrap-instead-of-scrolling-sideways-on-a-phone';
    const nodes = await Promise.all([
      create('vcard', { first_name: long, email: 'someone.with.a.long.address@example.com', phone: '+33 6 12 34 56 78' }),
      create('wifi', { ssid: long.slice(0, 32), password: 'correct horse battery staple', security: 'WPA2' }),
      create('microsite', { title: long, body: `${long} ${long}`, theme_color: '#AA3355', links: [{ label: long, url: 'https://example.com' }] }),
      create('digital_card', { name: long, bio: long, email: 'a@example.com' }),
      create('action', { action_type: 'sms', phone: '+1 555 0100', message: long }),
    ]);
    for (const node of nodes) {
      const { context, problems, response, overflow } = await open(node.slug);
      expect(response?.status()).toBe(200);
      expect(problems).toEqual([]);
      expect(overflow).toBeLessThanOrEqual(0);
      await context.close();
    }
    const paused = await create('redirect', { url: 'https://example.com' });
    await server.running.app.services.nodes.update(server.orgId, paused.slug, { status: 'paused' } as never);
    const p = await open(paused.slug);
    expect(p.response?.status()).toBe(503);
    expect(p.problems).toEqual([]);
    await p.context.close();
  });

  it('the Wi-Fi page has a working Copy button and a QR code phones can join from', async ({ skip }) => {
    const payload = { ssid: 'Café;Guest', password: 'pa:ss,wo"rd\\1', security: 'WPA2' };
    const node = await create('wifi', payload);
    const { context, page, problems } = await open(node.slug);
    const copy = page.getByRole('button', { name: 'Copy' });
    expect(await copy.isVisible()).toBe(true); // shown by the hashed script: it ran
    expect(await page.locator('#pw').textContent()).toBe(payload.password);
    expect(problems).toEqual([]);
    if (noZbar) {
      await context.close();
      return skip(noZbar);
    }
    const file = join(server.dataDir, 'wifi.png');
    writeFileSync(file, await page.locator('.qr').screenshot());
    // -Sbinary: the raw bytes (zbar would otherwise guess a legacy charset for non-ASCII bytes;
    // phone cameras read them as UTF-8).
    const decoded = execFileSync('zbarimg', ['--quiet', '--raw', '-Sbinary', file]).toString('utf8').replace(/\n$/, '');
    expect(decoded).toBe('WIFI:T:WPA;S:Café\\;Guest;P:pa\\:ss\\,wo\\"rd\\\\1;;');
    await context.close();
  });

  it('Copy works on a plain-http LAN origin, where the Clipboard API is missing', async () => {
    const node = await create('wifi', { ssid: 'Site office', password: 'staple-battery-7', security: 'WPA2' });
    const lan = server.url.replace('127.0.0.1', 'wifi.lan');
    const { context, page, problems } = await open(node.slug, lan);
    expect(await page.evaluate(() => ({ secure: window.isSecureContext, clipboard: 'clipboard' in navigator }))).toEqual({ secure: false, clipboard: false });
    const copy = page.getByRole('button', { name: 'Copy' });
    await copy.click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    // What a visitor pastes next: the password.
    await page.evaluate(() => {
      const area = document.createElement('textarea');
      area.id = 'paste';
      document.body.append(area);
      area.focus();
    });
    await page.keyboard.press('Control+V');
    expect(await page.locator('#paste').inputValue()).toBe('staple-battery-7');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the digital card saves its contact like the vCard page', async () => {
    const node = await create('digital_card', { name: 'Grace Hopper', job_title: 'Rear admiral', email: 'grace@example.com', phone: '+1 555 0100', bio: 'Compilers.' });
    const { context, page, problems } = await open(node.slug);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Save contact' }).click()]);
    expect(download.suggestedFilename()).toBe('Grace Hopper.vcf');
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text).toMatch(/^BEGIN:VCARD\r\nVERSION:3\.0\r\n/);
    expect(text).toContain('FN:Grace Hopper\r\n');
    expect(text).toContain('NOTE:Compilers.\r\n');
    expect(problems).toEqual([]);
    await context.close();
  });
});
