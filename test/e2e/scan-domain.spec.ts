// The scan domain in the console (issue 20): the first start on a loopback scan base asks for it,
// Settings edits it (and warns that printed tags keep theirs), and labels and tags are made on a
// loopback scan base only as a test print / test tag. An organization of its own, so that the
// other specs keep the shared server's loopback default.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Page } from '@playwright/test';
import { expect, requireChromium, server, test } from './support.ts';

requireChromium();

const root = join(import.meta.dirname, '..', '..');

function cli(args: string[]): { [k: string]: any } /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const out = execFileSync(process.execPath, [join(root, 'server', 'cli.ts'), ...args, '--data', process.env.WAYMARK_E2E_DATA!, '--json'], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!);
}

let key = '';
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${server.url}/console${path}#key=${key}`);
  await expect(page.locator('main#main')).toBeVisible();
}

test.beforeAll(() => {
  const org = cli(['org', 'create', '--name', `Scan domain e2e ${Date.now()}`]);
  key = cli(['keys', 'create', '--org', org.org.id, '--name', 'e2e', '--plan', 'enterprise']).api_key;
});

test('the first start asks for a scan domain; "Not now" hides it, a saved domain ends it', async ({ page, browser }) => {
  await open(page, '/nodes');
  const prompt = page.getByTestId('scan-domain-prompt');
  await expect(prompt).toBeVisible();
  await expect(prompt).toContainText('Where will phones open your tags?');
  await expect(prompt).toContainText(server.url);
  await prompt.getByRole('button', { name: 'Not now' }).click();
  await expect(prompt).toBeHidden();
  await page.reload();
  await expect(page.locator('main#main')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Nodes', level: 1 })).toBeVisible();
  await expect(page.getByTestId('scan-domain-prompt')).toBeHidden(); // remembered in this browser

  // Another browser asks again; a bad address is explained on the field, a good one is saved.
  const fresh = await browser.newPage();
  await open(fresh, '/nodes');
  const again = fresh.getByTestId('scan-domain-prompt');
  await expect(again).toBeVisible();
  await again.getByRole('textbox', { name: 'Scan domain' }).fill('ftp://scan.example.com');
  await again.getByRole('button', { name: 'Save scan domain' }).click();
  await expect(again.getByText('The scan domain must start with https:// or http://')).toBeVisible();
  await expect(again.getByRole('textbox', { name: 'Scan domain' })).toHaveAttribute('aria-invalid', 'true');
  await again.getByRole('textbox', { name: 'Scan domain' }).fill('https://Scan.Example.com/');
  await again.getByRole('button', { name: 'Save scan domain' }).click();
  await expect(again).toBeHidden();
  expect((await call('GET', '/organization')).body.data).toMatchObject({ scan_base: 'https://scan.example.com', scan_base_source: 'organization' });
  await fresh.close();
  await call('PATCH', '/organization', { scan_base: null });
});

test('Settings edits the scan domain, says who can open it and that printed tags keep theirs', async ({ page }) => {
  await open(page, '/settings');
  const card = page.locator('.card', { has: page.getByRole('heading', { name: 'Scan domain' }) });
  await expect(card).toContainText(server.url);
  await expect(card).toContainText('no phone can open it');
  await expect(card).toContainText('Labels already printed and tags already written keep the domain they were made with');
  await expect(page.getByTestId('scan-domain-prompt')).toBeHidden(); // Settings has the form itself

  await card.getByRole('textbox', { name: 'Scan domain' }).fill('http://192.168.1.20:8787');
  await card.getByRole('button', { name: 'Save scan domain' }).click();
  await expect(card).toContainText('only phones on the site’s Wi-Fi');
  await expect(card.locator('dd code')).toHaveText('http://192.168.1.20:8787');

  await card.getByRole('textbox', { name: 'Scan domain' }).fill('https://w.example.com');
  await card.getByRole('button', { name: 'Save scan domain' }).click();
  await expect(card.locator('dd code')).toHaveText('https://w.example.com');
  await expect(card).not.toContainText('no phone can open it');
  await expect(card).not.toContainText('Wi-Fi');
  const node = (await call('POST', '/nodes', { label: 'Door', function_type: 'redirect', payload: { url: 'https://example.com/door' } })).body.data;
  expect(node.url).toBe(`https://w.example.com/v/${node.slug}`);

  await card.getByRole('button', { name: 'Use the instance default' }).click();
  await expect(card.locator('dd code')).toHaveText(server.url);
  await expect(card).toContainText('no phone can open it');
});

test('labels and tags on a loopback scan base: only a test print / test tag; a LAN domain prints with a warning', async ({ page }) => {
  const node = (await call('POST', '/nodes', { label: 'Gate', function_type: 'redirect', payload: { url: 'https://example.com/gate' } })).body.data;
  await open(page, `/nodes/${node.slug}`);
  await page.getByRole('tab', { name: 'Print label' }).click();
  const download = page.getByRole('button', { name: 'Download PDF' });
  await expect(page.getByTestId('scan-base-check')).toContainText('No scan domain is set');
  await expect(download).toBeDisabled();
  await page.getByRole('checkbox', { name: 'Test print (labels no phone can open)' }).check();
  await expect(download).toBeEnabled();
  const request = page.waitForRequest((r) => r.url().includes(`/nodes/${node.slug}/label.pdf`));
  const [pdf] = await Promise.all([page.waitForEvent('download'), download.click()]);
  expect(new URL((await request).url()).searchParams.get('allow_local_scan_base')).toBe('true');
  expect(readFileSync((await pdf.path())!).subarray(0, 5).toString()).toBe('%PDF-');

  const probe = await call('GET', '/nfc/status');
  if (probe.status !== 404) {
    await page.getByRole('tab', { name: 'Write NFC tag' }).click();
    await expect(page.getByRole('checkbox', { name: 'Test tag (a tag no phone can open)' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Write NFC tag' })).toBeDisabled();
  }

  // A LAN address: no test needed, a warning instead.
  await call('PATCH', '/organization', { scan_base: 'http://192.168.1.20:8787' });
  await page.reload(); // the console reads the organization once per tab
  await expect(page.locator('main#main')).toBeVisible();
  await page.getByRole('tab', { name: 'Print label' }).click();
  await expect(page.getByText('only phones on the site’s Wi-Fi can open the labels printed now')).toBeVisible();
  await expect(page.getByRole('checkbox', { name: 'Test print (labels no phone can open)' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Download PDF' })).toBeEnabled();
  await call('PATCH', '/organization', { scan_base: null });
});
