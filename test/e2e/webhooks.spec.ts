import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, expect, openConsole, requireChromium, screenshot, test } from './support.ts';

requireChromium();

test('creates a webhook (secret shown once), sends a test and sees it delivered', async ({ page }) => {
  // A real receiver on loopback.
  const received: Array<{ headers: Record<string, unknown>; body: string }> = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/waymark`;
  try {
    await openConsole(page, '/webhooks');
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel('Receiver URL').fill('ftp://nope');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect(page.getByText('URL must be an http or https URL')).toBeVisible();
    await page.getByLabel('Receiver URL').fill(url);
    await page.getByLabel('Description').fill('Stock system');
    await page.getByRole('checkbox', { name: 'tag.written' }).uncheck();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect(page.getByTestId('webhook-secret')).toContainText(/whsec_/);
    await screenshot(page, 'webhooks');
    await page.getByRole('button', { name: 'Done' }).click();
    await expect(page.getByTestId('webhook-secret')).toHaveCount(0);

    const hooks = (await api('GET', '/webhooks')).body.data as Array<{ url: string; events: string[]; secret?: string }>;
    const hook = hooks.find((h) => h.url === url)!;
    expect(hook.events).not.toContain('tag.written');
    expect(hook).not.toHaveProperty('secret');

    await page.getByRole('button', { name: 'Send test' }).first().click();
    await expect(page.getByText('Test event queued')).toBeVisible();
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(JSON.parse(received[0]!.body)).toMatchObject({ type: 'webhook.test' });
    expect(received[0]!.headers['webhook-signature']).toMatch(/^v1,/);

    await page.getByRole('button', { name: 'Deliveries' }).first().click();
    const table = page.getByRole('table', { name: 'Deliveries' });
    await expect(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect(table.getByRole('row').nth(1)).toContainText('Delivered', { timeout: 1000 });
    }).toPass({ timeout: 15_000 });
    await expect(table).toContainText('webhook.test');
    await expect(table).toContainText('204');
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});

test('the webhooks screen degrades gracefully when the server has no webhooks API', async ({ page }) => {
  // This server has the webhooks API, so the test plays an older server that lacks it: the
  // route answers what such a server answers (its JSON 404 for an unknown path).
  await page.route(/\/v1\/webhooks(\?|$)/, (route) => route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ data: null, error: 'Not found' }) }));
  await openConsole(page, '/webhooks');
  await expect(page.getByText('Webhooks are not available on this server')).toBeVisible();
});
