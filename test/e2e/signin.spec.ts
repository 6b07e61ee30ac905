import { expect, requireChromium, screenshot, server, test } from './support.ts';

requireChromium();

test('the link printed by `waymark serve` signs in and the key leaves the address bar', async ({ page }) => {
  await page.goto(`${server.url}/console/#key=${server.firstKey}`);
  await expect(page.getByRole('heading', { name: 'Nodes' })).toBeVisible();
  expect(page.url()).toBe(`${server.url}/console/nodes`);
  expect(await page.evaluate(() => window.sessionStorage.getItem('waymark.apiKey'))).toBe(server.firstKey);
  expect(await page.evaluate(() => window.localStorage.length)).toBe(0);
  // Kept for the browser session: a reload stays signed in.
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Nodes' })).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to the console' })).toBeVisible();
  expect(await page.evaluate(() => window.sessionStorage.getItem('waymark.apiKey'))).toBeNull();
});

test('a key typed on the sign-in screen is checked by the server', async ({ page }) => {
  await page.goto(`${server.url}/console/`);
  await expect(page.getByRole('heading', { name: 'Sign in to the console' })).toBeVisible();
  await screenshot(page, 'sign-in');
  const field = page.getByLabel('API key');
  await field.fill('not a key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('API key must look like wmk_')).toBeVisible();
  await field.fill('wmk_0000000000000000000000000000000x');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('This key was not accepted')).toBeVisible();
  await expect(field).toHaveAttribute('aria-invalid', 'true');
  await field.fill(server.firstKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Nodes' })).toBeVisible();
});

test('the console page carries a strict CSP and deep links load the app', async ({ page, request }) => {
  const res = await request.get(`${server.url}/console/nodes/ANYTHING`);
  expect(res.status()).toBe(200);
  expect(res.headers()['content-security-policy']).toContain("script-src 'self'");
  expect(res.headers()['cache-control']).toBe('no-cache');
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) errors.push(m.text());
  });
  // The data directory is shown to the instance-admin key (the first key) only.
  await page.goto(`${server.url}/console/settings#key=${server.firstKey}`);
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  await expect(page.getByText('Data directory')).toBeVisible();
  await expect(page.getByText(process.env.WAYMARK_E2E_DATA!)).toBeVisible();
  await screenshot(page, 'settings');
  // Another tab (its own session) signed in with an ordinary key does not see it.
  const other = await page.context().newPage();
  await other.goto(`${server.url}/console/settings#key=${server.key}`);
  await expect(other.getByText('Shown to instance-admin keys only')).toBeVisible();
  await expect(other.getByText(process.env.WAYMARK_E2E_DATA!)).toHaveCount(0);
  await other.close();
  expect(errors).toEqual([]);
});
