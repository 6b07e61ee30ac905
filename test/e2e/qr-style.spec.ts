// QR codes on brand in the console (issue 17 item 2): Settings edits the organization's QR code
// style with a live preview of the unsaved form, refuses unreadable colours in the preview, takes
// a logo upload, and saves. An organization of its own, so the other specs keep plain codes.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { type Page } from '@playwright/test';
import { PNG } from 'pngjs';
import { decodeAll, missingTools, parsePng } from '../print/raster.ts';
import { expect, requireChromium, server, test } from './support.ts';

requireChromium();

const root = join(import.meta.dirname, '..', '..');
let key = '';

function cli(args: string[]): { [k: string]: any } /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const out = execFileSync(process.execPath, [join(root, 'server', 'cli.ts'), ...args, '--data', process.env.WAYMARK_E2E_DATA!, '--json'], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!);
}

test.beforeAll(() => {
  const org = cli(['org', 'create', '--name', `QR style e2e ${Date.now()}`]);
  key = cli(['keys', 'create', '--org', org.org.id, '--name', 'e2e', '--plan', 'enterprise']).api_key;
});

/** The SVG the preview <img> shows (a data: URL). */
async function previewSvg(page: Page): Promise<string> {
  const img = page.getByTestId('qr-style-preview');
  await expect(img).toBeVisible();
  const src = (await img.getAttribute('src')) ?? '';
  return decodeURIComponent(src.replace(/^data:image\/svg\+xml;charset=utf-8,/, ''));
}

function logoPng(): Buffer {
  const png = new PNG({ width: 48, height: 48 });
  for (let i = 0; i < 48 * 48; i++) png.data.set([230, 57, 70, 255], i * 4);
  return PNG.sync.write(png);
}

test('Settings previews the QR code style live, refuses unreadable colours and saves', async ({ page }) => {
  await page.goto(`${server.url}/console/settings#key=${key}`);
  await expect(page.locator('main#main')).toBeVisible();
  const card = page.getByRole('form', { name: 'QR code style' });
  await expect(card).toBeVisible();
  await expect.poll(() => previewSvg(page)).toContain('fill="#000000"');

  // Unsaved edits show in the preview.
  await card.getByLabel('Foreground').fill('#1d3557');
  await card.getByLabel('Modules').selectOption('dots');
  await card.getByLabel('Call to action').fill('Scan for the menu');
  await expect.poll(() => previewSvg(page)).toContain('fill="#1D3557"');
  const styled = await previewSvg(page);
  expect(styled).toContain('Scan for the menu');
  expect(styled).toMatch(/a0\.45 0\.45/);

  // What the preview shows decodes.
  const skip = missingTools();
  if (!skip) {
    const shot = await page.getByTestId('qr-style-preview').screenshot();
    expect(decodeAll([parsePng(shot)])[0]).toEqual(['HTTPS://SCAN.EXAMPLE.COM/V/K3M9QX2P']);
  }

  // Colours a reader may fail on: the server's message replaces the preview.
  await card.getByLabel('Foreground').fill('#dddddd');
  const refusal = page.getByTestId('qr-style-preview-error');
  await expect(refusal).toContainText('#DDDDDD');
  await expect(refusal).toContainText('at least 4.5:1');
  await card.getByLabel('Foreground').fill('#1d3557');
  await expect.poll(() => previewSvg(page)).toContain('fill="#1D3557"');

  // A logo upload goes straight into the preview.
  await card.getByLabel('Logo', { exact: true }).setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: logoPng() });
  await expect(card.getByLabel('Put the logo on codes')).toBeChecked();
  await expect.poll(() => previewSvg(page)).toContain('href="data:image/png;base64,');
  const bad = { name: 'evil.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') };
  await card.getByLabel('Logo', { exact: true }).setInputFiles(bad);
  await expect(card.getByRole('alert')).toContainText('must not contain scripts');

  await card.getByRole('button', { name: 'Save QR code style' }).click();
  await expect(page.getByText('QR code style saved')).toBeVisible();
  const res = await fetch(`${server.url}/v1/organization/qr-style`, { headers: { authorization: `Bearer ${key}` } });
  const saved = ((await res.json()) as { data: Record<string, unknown> }).data;
  expect(saved).toMatchObject({ fg: '#1D3557', bg: '#FFFFFF', module_style: 'dots', logo: true, frame_text: 'Scan for the menu' });

  // Reloaded, the form shows what was saved.
  await page.reload();
  await expect(page.getByRole('form', { name: 'QR code style' }).getByLabel('Call to action')).toHaveValue('Scan for the menu');

  // A label print uses the organization's style unless the print asks for a plain code.
  const created = await fetch(`${server.url}/v1/nodes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'Menu', function_type: 'redirect', payload: { url: 'https://example.com/menu' } }),
  });
  const slug = ((await created.json()) as { data: { slug: string } }).data.slug;
  const labelSvg = (plain: boolean) => (r: { url(): string }) => r.url().includes(`/nodes/${slug}/label.svg`) && r.url().includes('logo=false') === plain;
  const organizationStyled = page.waitForRequest(labelSvg(false));
  await page.goto(`${server.url}/console/nodes/${slug}#key=${key}`);
  await page.getByRole('tab', { name: 'Print label' }).click();
  await organizationStyled;
  // The 25 mm roll label is too small for a code at level H in a frame: the preview says why.
  await expect(page.getByText(/too small for the scan URL.*error correction H for the logo and the frame/)).toBeVisible();
  const plainRequest = page.waitForRequest(labelSvg(true));
  await page.getByLabel('Code style').selectOption('plain');
  expect((await plainRequest).url()).toMatch(/fg=000000.*bg=FFFFFF.*style=square.*logo=false.*frame=false/);
  await expect(page.getByTestId('label-preview')).toBeVisible();
});
