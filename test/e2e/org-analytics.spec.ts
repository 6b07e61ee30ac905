// The organization's Analytics screen (GET /v1/analytics): totals, the scans by source, the chart
// and the top nodes against scans seeded over real HTTP, a top node's link to its Scans &
// analytics tab, and the empty state of an organization nobody has scanned yet. Organizations of
// their own, so that the other specs' scans do not change the figures.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, requireChromium, screenshot, server, test } from './support.ts';

requireChromium();

const root = join(import.meta.dirname, '..', '..');
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

function cli(args: string[]): { [k: string]: any } /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const out = execFileSync(process.execPath, [join(root, 'server', 'cli.ts'), ...args, '--data', process.env.WAYMARK_E2E_DATA!, '--json'], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!);
}

/**
 * A new organization and an enterprise key for it (no rate limit in the way of the seeding), with
 * a scan domain so that the console does not ask for one above the screen.
 */
async function newOrganization(name: string): Promise<string> {
  const org = cli(['org', 'create', '--name', `${name} ${Date.now()}`]);
  const key = cli(['keys', 'create', '--org', org.org.id, '--name', 'e2e', '--plan', 'enterprise']).api_key as string;
  expect((await call(key, 'PATCH', '/organization', { scan_base: 'https://scan.example.com' })).status).toBe(200);
  return key;
}

async function call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** One scan of the node's code (`?nfc`: a tap of a plain NFC tag, an unverified source). */
async function scan(slug: string, ua: string, query = ''): Promise<void> {
  const res = await fetch(`${server.url}/v/${slug}${query}`, { headers: { 'user-agent': ua }, redirect: 'manual' });
  await res.arrayBuffer();
  expect(res.status).toBe(302);
}

async function open(page: Page, key: string, path: string): Promise<void> {
  await page.goto(`${server.url}/console${path}#key=${key}`);
  await expect(page.locator('main#main')).toBeVisible();
}

test('totals, sources and top nodes match the seeded scans; a top node opens its analytics', async ({ page }) => {
  const key = await newOrganization('Analytics e2e');
  const node = async (label: string) => (await call(key, 'POST', '/nodes', { label, function_type: 'redirect', payload: { url: 'https://example.com/' } })).body.data as { slug: string };
  const menu = await node('Menu board');
  const door = await node('Front door');
  await node('Never scanned');
  // Front door: 4 scans (3 QR, 1 NFC); Menu board: 2 (1 QR, 1 NFC). Two browsers on one address.
  for (const ua of [IPHONE, IPHONE, DESKTOP]) await scan(door.slug, ua);
  await scan(door.slug, IPHONE, '?nfc');
  await scan(menu.slug, DESKTOP);
  await scan(menu.slug, IPHONE, '?nfc');

  await open(page, key, '/nodes');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
  await expect(page.getByRole('heading', { name: 'Analytics', level: 1 })).toBeVisible();
  await expect(page).toHaveURL(/\/console\/analytics$/);
  await expect(page.getByLabel('Period')).toHaveValue('30d');

  const totals = page.getByRole('definition');
  const tile = (name: string) => page.locator('.stat-tile').filter({ has: page.getByRole('term').filter({ hasText: name }) }).getByRole('definition');
  await expect(totals).toHaveCount(4);
  await expect(tile('Scans')).toHaveText('6');
  await expect(tile('Unique visitors')).toHaveText('2'); // a visitor is an address and browser per day
  await expect(tile('Nodes scanned')).toHaveText('2');
  await expect(tile('Verified NFC taps')).toHaveText('0 0%');

  await expect(page.getByRole('list', { name: 'Scans by source' }).getByRole('listitem')).toHaveText(['QR code4', 'NFC tap, verified0', 'NFC link, not verified2']);
  await expect(page.getByRole('list', { name: 'Devices' }).getByRole('listitem')).toHaveText(['mobile4', 'desktop2']);

  // Today's bar (the last one, UTC) holds all six scans.
  const chart = page.getByRole('figure', { name: /^Scans per day \(UTC\)/ });
  await expect(chart.getByRole('listitem').last().locator('.chart-value')).toHaveText('6');

  // The top nodes, most scanned first; the never scanned node is not among them.
  const rows = page.getByTestId('top-nodes').locator('tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0).locator('td[data-label="Node"] a')).toHaveText('Front door');
  await expect(rows.nth(0).locator('td[data-label="Scans"]')).toHaveText('4');
  await expect(rows.nth(0).locator('td[data-label="Of all scans"]')).toHaveText('67%');
  await expect(rows.nth(1).locator('td[data-label="Node"] a')).toHaveText('Menu board');
  await expect(rows.nth(1).locator('td[data-label="Scans"]')).toHaveText('2');
  await screenshot(page, 'org-analytics');

  // Grouping by week draws one bar per week; the choice stays in the URL.
  await page.getByLabel('Group by').selectOption('week');
  await expect(page).toHaveURL(/range=30d&by=week/);
  await expect(page.getByRole('figure', { name: /^Scans per week \(UTC\)/ })).toBeVisible();
  await expect(tile('Scans')).toHaveText('6');

  await rows.nth(0).getByRole('link', { name: 'Front door' }).click();
  await expect(page).toHaveURL(new RegExp(`/console/nodes/${door.slug}\\?tab=scans$`));
  await expect(page.getByRole('tab', { name: 'Scans & analytics' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('.big-number')).toContainText('4 scans');
});

test('an organization without scans is told how to get some', async ({ page }) => {
  const key = await newOrganization('Analytics empty e2e');
  await call(key, 'POST', '/nodes', { label: 'Not yet printed', function_type: 'redirect', payload: { url: 'https://example.com/' } });
  await open(page, key, '/analytics');
  const empty = page.locator('.state-empty');
  await expect(empty.getByText('No scans in the last 30 days')).toBeVisible();
  await expect(empty).toContainText('Print a label or write a tag for a node, then scan it with a phone');
  await expect(empty.getByRole('link', { name: 'Print labels' })).toHaveAttribute('href', '/console/print');
  await expect(page.getByTestId('top-nodes')).toHaveCount(0);
});

test.describe('phone 390×844', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the top nodes become a list of labelled cards', async ({ page }) => {
    const key = await newOrganization('Analytics phone e2e');
    const node = (await call(key, 'POST', '/nodes', { label: 'Shelf talker', function_type: 'redirect', payload: { url: 'https://example.com/' } })).body.data as { slug: string };
    await scan(node.slug, IPHONE);
    await open(page, key, '/analytics');
    const table = page.getByTestId('top-nodes');
    await expect(table.locator('tbody tr')).toHaveCount(1);
    await expect(table.locator('thead')).toBeHidden();
    const scans = table.locator('td[data-label="Scans"]');
    await expect(scans).toHaveText('1');
    expect(await scans.evaluate((td) => getComputedStyle(td, '::before').content)).toBe('"Scans"');
    const o = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
    expect(o.scrollWidth).toBeLessThanOrEqual(o.innerWidth);
  });
});
