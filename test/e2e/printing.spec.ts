import { readFileSync } from 'node:fs';
import { api, expect, openConsole, requireChromium, screenshot, test } from './support.ts';

requireChromium();

test('prints a batch: layout picker, preview, PDF download', async ({ page }) => {
  const probe = await api('GET', '/layouts');
  test.skip(probe.status === 404, 'the printing API (/v1/layouts) is not on this branch');
  const layouts = probe.body.data as Array<{ id: string; name: string }>;
  expect(layouts.length).toBeGreaterThan(1);

  const prefix = `PRN${Math.random().toString(36).slice(2, 5).toUpperCase()}`;
  const batch = (await api('POST', '/batches', { label: 'Shelf labels', prefix, quantity: 30, function_type: 'redirect', base_payload: { url: 'https://example.com' } })).body.data;
  await expect.poll(async () => (await api('GET', `/batches/${batch.id}`)).body.data.status, { timeout: 20_000 }).toBe('ready');

  await openConsole(page, `/batches/${batch.id}`);
  await page.getByRole('main').getByRole('link', { name: 'Print labels' }).click();
  await expect(page.getByRole('heading', { name: 'Print labels', level: 1 })).toBeVisible();
  await expect(page.getByLabel('Batch', { exact: true })).toHaveValue(batch.id);
  const preview = page.getByRole('img', { name: /^Page 1 of \d+ of the label sheets$/ });
  await expect(preview).toBeVisible();
  await page.getByLabel('Layout').selectOption(layouts[1]!.id);
  await expect(preview).toBeVisible();
  expect(await preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  await screenshot(page, 'print-labels');

  const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PDF' }).click()]);
  expect(pdf.suggestedFilename()).toBe(`${prefix}-${layouts[1]!.id}.pdf`);
  expect(readFileSync((await pdf.path())!).subarray(0, 5).toString()).toBe('%PDF-');
});
