import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { api, expect, openConsole, requireChromium, screenshot, test, unique } from './support.ts';

requireChromium();

/** The controls of the print options, by accessible name: the same on the batch screen and the node tab. */
async function printControls(page: Page): Promise<string[]> {
  const options = page.getByRole('region', { name: 'Print options' });
  const names: string[] = [];
  for (const role of ['combobox', 'textbox', 'checkbox', 'button'] as const) {
    for (const el of await options.getByRole(role).all()) {
      names.push(`${role}: ${await el.evaluate((e) => (e as HTMLInputElement).labels?.[0]?.innerText.trim() || (e as HTMLElement).innerText.trim())}`);
    }
  }
  return names.filter((n) => !n.startsWith('combobox: Batch'));
}

test('prints a batch: layout picker, preview, printer profile, offsets, calibration page, PDF', async ({ page }) => {
  const probe = await api('GET', '/layouts');
  expect(probe.status).toBe(200);
  const layouts = probe.body.data as Array<{ id: string; name: string; kind: string }>;
  expect(layouts.length).toBeGreaterThan(1);

  const prefix = `PRN${Math.random().toString(36).slice(2, 5).toUpperCase()}`;
  const batch = (await api('POST', '/batches', { label: 'Shelf labels', prefix, quantity: 30, function_type: 'redirect', base_payload: { url: 'https://example.com' } })).body.data;
  await expect.poll(async () => (await api('GET', `/batches/${batch.id}`)).body.data.status, { timeout: 20_000 }).toBe('ready');
  const grid = layouts.find((l) => l.id === 'a4-grid-40') ?? layouts[1]!;
  const laser = (await api('POST', '/printers', { name: unique('Laser tray 2'), layout: grid.id, offset_x: 0.5, offset_y: -1 })).body.data as { id: string; name: string };

  await openConsole(page, `/batches/${batch.id}`);
  await page.getByRole('main').getByRole('link', { name: 'Print labels' }).click();
  await expect(page.getByRole('heading', { name: 'Print labels', level: 1 })).toBeVisible();
  await expect(page.getByLabel('Batch', { exact: true })).toHaveValue(batch.id);
  const preview = page.getByTestId('label-preview');
  await expect(preview).toHaveAttribute('alt', /^Label sheets of Shelf labels, page 1 of 2, on /);
  const loaded = () => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0);
  await expect.poll(loaded).toBe(true);

  // Layout names are readable: a short title per option (grouped by kind), the rest in the hint.
  const picker = page.getByLabel('Layout');
  const titles = await picker.locator('option').allInnerTexts();
  expect(titles).toHaveLength(layouts.length);
  for (const t of titles) expect(t.length).toBeLessThanOrEqual(24);
  expect(await picker.locator('optgroup').evaluateAll((gs) => gs.map((g) => (g as HTMLOptGroupElement).label))).toEqual(['Label sheets', 'Label printers (one label per page)']);
  await picker.selectOption('avery-l7160');
  await expect(page.getByText('A4, 21 labels (63.5 × 38.1 mm). 3 × 7 labels of 63.5 × 38.1 mm per page.')).toBeVisible();
  await expect(preview).toHaveAttribute('alt', /on Avery L7160 — A4, 21 labels \(63\.5 × 38\.1 mm\)$/);
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(preview).toHaveAttribute('alt', /page 2 of 2/);

  // A printer profile brings its paper and its offsets; the preview asks for them.
  const previewed = page.waitForRequest((r) => r.url().includes(`/batches/${batch.id}/preview.svg`) && new URL(r.url()).searchParams.get('printer') === laser.id);
  await page.getByLabel('Printer profile', { exact: true }).selectOption(laser.id);
  await previewed;
  await expect(picker).toHaveValue(grid.id);
  await expect(page.getByText('Offsets 0.5 / -1 mm; offsets typed below win.')).toBeVisible();
  await expect(preview).toHaveAttribute('alt', /page 1 of/);

  // Offsets are checked on the field; typed ones go with the PDF.
  await page.getByLabel('Offset right (mm)').fill('11');
  await expect(page.getByText('A number from −10 to 10')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Download PDF' })).toBeDisabled();
  await page.getByLabel('Offset right (mm)').fill('1.5');
  await expect.poll(loaded).toBe(true);
  await screenshot(page, 'print-labels');

  // The e2e server's scan base is loopback: labels print only as a test print.
  await expect(page.getByRole('button', { name: 'Download PDF' })).toBeDisabled();
  await page.getByRole('checkbox', { name: 'Test print (labels no phone can open)' }).check();
  const pdfRequest = page.waitForRequest((r) => r.url().includes(`/batches/${batch.id}/manifest`));
  const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PDF' }).click()]);
  const q = new URL((await pdfRequest).url()).searchParams;
  expect(Object.fromEntries(q)).toMatchObject({ format: 'pdf', layout: grid.id, printer: laser.id, offset_x: '1.5', allow_local_scan_base: 'true' });
  expect(pdf.suggestedFilename()).toBe(`${prefix}-labels-${grid.id}.pdf`); // the server's Content-Disposition name
  expect(readFileSync((await pdf.path())!).subarray(0, 5).toString()).toBe('%PDF-');

  const [cal] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Calibration page' }).click()]);
  expect(cal.suggestedFilename()).toBe(`calibration-${grid.id}.pdf`);
  expect(readFileSync((await cal.path())!).subarray(0, 5).toString()).toBe('%PDF-');

  // Save the typed offsets as a new profile from this screen too.
  const name = unique('Sheet feeder');
  await page.getByLabel('Save offsets as a printer profile').fill(name);
  await page.getByRole('button', { name: 'Save profile' }).click();
  await expect(page.getByLabel('Printer profile', { exact: true }).locator('option:checked')).toHaveText(name);
  const printers = (await api('GET', '/printers')).body.data as Array<{ name: string; layout: string; offset_x: number; offset_y: number }>;
  expect(printers.find((p) => p.name === name)).toMatchObject({ layout: grid.id, offset_x: 1.5, offset_y: -1 });

  // The same print options as the node's Print label tab (one shared component).
  const batchControls = await printControls(page);
  const node = (await api('GET', `/nodes?batch_id=${batch.id}&limit=1`)).body.data[0] as { slug: string };
  await openConsole(page, `/nodes/${node.slug}`);
  await page.getByRole('tab', { name: 'Print label' }).click();
  await expect(page.getByTestId('label-preview')).toBeVisible();
  await page.getByLabel('Layout').selectOption(grid.id);
  expect(await printControls(page)).toEqual(batchControls);
  expect(batchControls).toEqual(expect.arrayContaining(['combobox: Printer profile', 'textbox: Offset right (mm)', 'button: Calibration page', 'button: Save profile']));
});
