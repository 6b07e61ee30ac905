import { api, expect, openConsole, requireChromium, screenshot, unique, test } from './support.ts';

requireChromium();

test('creates a template with a locked field; a node made from it shows the field locked', async ({ page }) => {
  const name = unique('Office Wi-Fi');
  await openConsole(page, '/templates');
  await page.getByRole('button', { name: 'New template' }).click();
  await page.getByLabel('Template name').fill(name);
  await page.getByLabel('Type').selectOption('wifi');
  await page.getByLabel('Network name (SSID)').fill('Office');
  await page.getByLabel('Password', { exact: true }).fill('office-pass-123');
  await page.getByRole('checkbox', { name: 'Lock ssid' }).check();
  await page.getByRole('button', { name: 'Create template' }).click();
  await expect(page.getByRole('row', { name: new RegExp(name) })).toContainText('ssid');
  await screenshot(page, 'templates');

  await openConsole(page, '/nodes/new?type=wifi');
  await page.getByLabel('Label', { exact: true }).fill(unique('Meeting room'));
  await page.getByLabel('Template').selectOption({ label: name });
  await expect(page.getByLabel('Network name (SSID)')).toHaveValue('Office');
  await expect(page.getByLabel('Network name (SSID)')).toHaveAttribute('readonly', '');
  await page.getByLabel('Password', { exact: true }).fill('room-pass-456');
  await page.getByRole('button', { name: 'Create node' }).click();
  await expect(page.getByRole('tab', { name: 'Overview' })).toBeVisible();
  const slug = page.url().split('/').pop()!;
  const node = (await api('GET', `/nodes/${slug}`)).body.data;
  expect(node.template_id).not.toBeNull();
  expect(node.payload.ssid).toBe('Office');
  expect(node.payload.password).toBe('room-pass-456');
});
