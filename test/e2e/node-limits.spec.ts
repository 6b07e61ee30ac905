import { api, expect, openConsole, requireChromium, server, test, unique } from './support.ts';

requireChromium();
// The expiry field is in the browser's zone: UTC here, so the stored instant is the typed one.
test.use({ timezoneId: 'UTC' });

test('the node editor sets and clears expiry, a scan limit, a fallback and a password', async ({ page }) => {
  const label = unique('Limited door');
  const created = await api('POST', '/nodes', { label, function_type: 'redirect', payload: { url: 'https://example.com/door' } });
  expect(created.status).toBe(201);
  const slug = created.body.data.slug as string;

  await openConsole(page, `/nodes/${slug}`);
  const form = page.getByRole('form', { name: 'Node limits' });
  await expect(form).toBeVisible();

  // A limit the API refuses is shown at its field, nothing saved.
  await form.getByLabel('Maximum scans').fill('0');
  await form.getByRole('button', { name: 'Save limits' }).click();
  await expect(form.getByText('Maximum scans must be at least 1')).toBeVisible();
  expect((await api('GET', `/nodes/${slug}`)).body.data.max_scans).toBeNull();

  await form.getByLabel('Expires').fill('2030-06-01T12:00');
  await form.getByLabel('Maximum scans').fill('3');
  await form.getByLabel('After the limit or expiry').selectOption('redirect');
  await form.getByLabel('Fallback URL').fill('https://example.com/sold-out');
  await form.getByLabel('Scan password', { exact: true }).fill('open sesame');
  await form.getByRole('button', { name: 'Save limits' }).click();
  await expect(page.getByText('Limits saved')).toBeVisible();
  await expect.poll(async () => (await api('GET', `/nodes/${slug}`)).body.data).toMatchObject({
    expires_at: '2030-06-01T12:00:00.000Z',
    max_scans: 3,
    password_protected: true,
    after_limit: { type: 'redirect', url: 'https://example.com/sold-out' },
  });
  // The password is never shown back; the form says one is set.
  await expect(form.getByText('A password is set')).toBeVisible();
  await expect(form.getByLabel('New scan password')).toHaveValue('');
  // A scan now gets the password page.
  const scanned = await fetch(`${server.url}/v/${slug}`, { redirect: 'manual' });
  expect(scanned.status).toBe(200);
  expect(await scanned.text()).toContain('password protected');

  // Clear: no expiry, no limit, the 410 page, no password.
  await form.getByLabel('Expires').fill('');
  await form.getByLabel('Maximum scans').fill('');
  await form.getByLabel('After the limit or expiry').selectOption('gone');
  await form.getByLabel('Remove the scan password').check();
  await form.getByRole('button', { name: 'Save limits' }).click();
  await expect.poll(async () => (await api('GET', `/nodes/${slug}`)).body.data).toMatchObject({
    expires_at: null,
    max_scans: null,
    password_protected: false,
    after_limit: { type: 'gone' },
  });
  await expect(form.getByLabel('Scan password', { exact: true })).toBeVisible();
});
