import { api, expect, openConsole, requireChromium, screenshot, unique, test } from './support.ts';

requireChromium();

test('creates an API key shown once, and revokes it', async ({ page }) => {
  const name = unique('Inventory script');
  await openConsole(page, '/api-keys');
  await page.getByRole('button', { name: 'New API key' }).click();
  await page.getByLabel('Key name').fill(name);
  await page.getByLabel('Plan').selectOption('pro');
  await page.getByRole('button', { name: 'Create key' }).click();

  const secret = page.getByTestId('secret-value');
  await expect(secret).toHaveText(/^wmk_[A-Za-z0-9]{32}$/);
  const key = (await secret.textContent())!;
  await expect(page.getByText('shown only this once')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Copy', exact: true })).toBeVisible();
  expect((await api('GET', '/nodes?limit=1', undefined, key)).status).toBe(200);
  await screenshot(page, 'api-keys');

  // Shown once: after "Done" (or a reload) only the prefix remains.
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByTestId('secret-value')).toHaveCount(0);
  await page.reload();
  const row = page.getByRole('row', { name: new RegExp(name) });
  await expect(row).toContainText(`${key.slice(0, 8)}`);
  await expect(page.getByText(key)).toHaveCount(0);

  await row.getByRole('button', { name: `Revoke ${name}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await expect(page.getByRole('row', { name: new RegExp(name) })).toHaveCount(0);
  expect((await api('GET', '/nodes?limit=1', undefined, key)).status).toBe(401);
});
