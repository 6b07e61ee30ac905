import { readFileSync } from 'node:fs';
import { api, expect, openConsole, requireChromium, screenshot, test } from './support.ts';

requireChromium();

test('creates a batch, watches it become ready and downloads its manifest', async ({ page }) => {
  const prefix = `E2E${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
  await openConsole(page, '/batches');
  await page.getByRole('button', { name: 'New batch' }).click();
  await page.getByLabel('Batch label').fill('Cafe tables');
  await page.getByLabel('Serial prefix').fill(prefix);
  await page.getByLabel('Quantity').fill('40');
  await page.getByLabel('Node type').selectOption('redirect');
  await page.getByLabel('Base destination URL').fill('https://example.com/menu');
  await page.getByRole('button', { name: 'Create batch' }).click();

  await expect(page.getByRole('heading', { name: 'Cafe tables' })).toBeVisible();
  // Live progress until ready (polling GET /v1/batches/{id}).
  await expect(page.locator('.page-header').getByText('Ready', { exact: true })).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId('batch-progress')).toHaveText('40 / 40');
  await expect(page.getByRole('table', { name: 'Nodes of this batch' }).getByRole('row').nth(1)).toContainText(`${prefix}-001`);
  await screenshot(page, 'batch');

  const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Manifest JSON' }).click()]);
  expect(json.suggestedFilename()).toBe(`${prefix}-manifest.json`);
  const manifest = JSON.parse(readFileSync((await json.path())!, 'utf8')) as { data: { nodes: Array<{ serial: string; slug: string }> } };
  expect(manifest.data.nodes).toHaveLength(40);
  expect(manifest.data.nodes[0]!.serial).toBe(`${prefix}-001`);

  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Manifest CSV' }).click()]);
  expect(csv.suggestedFilename()).toBe(`${prefix}-manifest.csv`);
  const lines = readFileSync((await csv.path())!, 'utf8').trim().split(/\r?\n/);
  expect(lines[0]).toBe('serial,slug,url,id,status,hardware_id,tag_protection');
  expect(lines).toHaveLength(41);

  // The batch's nodes are also a filter of the Nodes screen.
  const id = page.url().split('/').pop()!;
  expect((await api('GET', `/nodes?batch_id=${id}&limit=1`)).body.total).toBe(40);

  await openConsole(page, '/batches');
  await expect(page.getByRole('table', { name: 'Batches' })).toContainText(prefix);
  await screenshot(page, 'batches');
});

test('batch form errors show on the right fields', async ({ page }) => {
  await openConsole(page, '/batches');
  await page.getByRole('button', { name: 'New batch' }).click();
  await page.getByLabel('Serial prefix').fill('bad prefix!');
  await page.getByLabel('Quantity').fill('501');
  await page.getByRole('button', { name: 'Create batch' }).click();
  await expect(page.getByText('Label must not be empty')).toBeVisible();
  await expect(page.getByText('Prefix must be 1 to 32 letters, digits, _ or -')).toBeVisible();
  await expect(page.getByText('Quantity must be at most 500')).toBeVisible();
  await expect(page.getByText('Base destination URL is required')).toBeVisible();
});
