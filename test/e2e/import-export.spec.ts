import { readFileSync } from 'node:fs';
import { api, expect, openConsole, requireChromium, screenshot, test, unique } from './support.ts';

requireChromium();

/** A CSV line with `values` under their columns of `header` (the rest empty). */
function line(header: string[], values: Record<string, string>): string {
  return header.map((column) => values[column] ?? '').join(',');
}

test('exports the nodes as CSV, previews an edited file with its row errors, and imports the valid rows', async ({ page }) => {
  const label = unique('Import door');
  const { slug } = (await api('POST', '/nodes', { label, function_type: 'redirect', payload: { url: 'https://example.com/door' } })).body.data as { slug: string };

  await openConsole(page, '/nodes');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  expect(download.suggestedFilename()).toBe('nodes.csv');
  const exported = readFileSync((await download.path())!, 'utf8');
  const [headerLine, ...lines] = exported.trimEnd().split('\r\n');
  const header = headerLine!.split(',');
  expect(header.slice(0, 6)).toEqual(['slug', 'serial', 'label', 'function_type', 'status', 'template_id']);
  const ours = lines.find((l) => l.startsWith(`${slug},`));
  expect(ours).toBeDefined();

  // Edited as in a spreadsheet: our node renamed, a new row, and a row with a bad URL.
  const renamed = unique('Renamed door');
  const added = unique('Imported menu');
  const edited = [
    headerLine,
    ...lines.map((l) => (l === ours ? l.replace(`,${label},`, `,${renamed},`) : l)),
    line(header, { label: added, function_type: 'redirect', 'payload.url': 'https://example.com/menu' }),
    line(header, { label: 'Broken', function_type: 'redirect', 'payload.url': 'not a url' }),
  ].join('\r\n');

  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Import nodes' })).toBeVisible();
  await page.getByLabel('CSV or JSON file').setInputFiles({ name: 'nodes.csv', mimeType: 'text/csv', buffer: Buffer.from(edited) });
  await expect(page.getByTestId('import-summary')).toContainText('1 new node, 1 update');
  await expect(page.getByTestId('import-summary')).toContainText('1 row with errors');
  const errors = page.getByRole('table', { name: 'Rows with errors' });
  await expect(errors.getByRole('row').nth(1)).toContainText(String(lines.length + 2));
  await expect(errors.getByRole('row').nth(1)).toContainText('payload.url');
  await expect(errors.getByRole('row').nth(1)).toContainText('must be an http or https URL');
  await screenshot(page, 'import-preview');

  // The preview wrote nothing; importing everything is refused until the bad row is skipped.
  expect((await api('GET', `/nodes/${slug}`)).body.data.label).toBe(label);
  const importButton = page.getByRole('button', { name: 'Import', exact: true });
  await expect(importButton).toBeDisabled();
  await page.getByLabel(/Import the valid rows and skip the 1 row with errors/).check();
  await importButton.click();
  await expect(page.getByText(/Imported: 1 created, 1 updated/)).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Nodes', exact: true })).toBeVisible();

  expect((await api('GET', `/nodes/${slug}`)).body.data.label).toBe(renamed);
  const found = (await api('GET', `/nodes?q=${encodeURIComponent(added)}`)).body;
  expect(found.total).toBe(1);
  expect(found.data[0]).toMatchObject({ label: added, payload: { url: 'https://example.com/menu' } });
  expect((await api('GET', `/nodes?q=Broken&limit=100`)).body.data.filter((n: { label: string }) => n.label === 'Broken')).toEqual([]);
});
