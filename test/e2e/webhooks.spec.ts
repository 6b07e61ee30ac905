import { api, expect, openConsole, requireChromium, screenshot, test } from './support.ts';

requireChromium();

test('creates a webhook (secret shown once) and sends a test', async ({ page }) => {
  const probe = await api('GET', '/webhooks');
  test.skip(probe.status === 404, 'the webhooks API (/v1/webhooks) is not on this branch yet');

  await openConsole(page, '/webhooks');
  await page.getByRole('button', { name: 'New webhook' }).click();
  await page.getByLabel('Receiver URL').fill('http://127.0.0.1:9/waymark');
  await page.getByLabel('Description').fill('Test receiver');
  await page.getByRole('button', { name: 'Create webhook' }).click();
  await expect(page.getByTestId('webhook-secret')).toContainText('whsec_');
  await screenshot(page, 'webhooks');
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByTestId('webhook-secret')).toHaveCount(0);

  await page.getByRole('button', { name: 'Send test' }).first().click();
  await expect(page.getByText('Test event queued')).toBeVisible();
  await page.getByRole('button', { name: 'Deliveries' }).first().click();
  await expect(page.getByRole('table', { name: 'Deliveries' }).or(page.getByText('No deliveries yet'))).toBeVisible();
});

test('the webhooks screen degrades gracefully when the server has no webhooks API', async ({ page }) => {
  const probe = await api('GET', '/webhooks');
  test.skip(probe.status !== 404, 'this server has the webhooks API');
  await openConsole(page, '/webhooks');
  await expect(page.getByText('Webhooks are not available on this server')).toBeVisible();
});
