import { api, expect, openConsole, requireChromium, screenshot, test } from './support.ts';

requireChromium();

test('the Program tags screen shows the reader and runs a batch writing session', async ({ page }) => {
  const probe = await api('GET', '/nfc/status');
  expect(probe.status).toBe(200);

  const prefix = `NFC${Math.random().toString(36).slice(2, 5).toUpperCase()}`;
  const batch = (await api('POST', '/batches', { label: 'Tags to write', prefix, quantity: 3, function_type: 'redirect', base_payload: { url: 'https://example.com' } })).body.data;
  await expect.poll(async () => (await api('GET', `/batches/${batch.id}`)).body.data.status, { timeout: 20_000 }).toBe('ready');

  await openConsole(page, '/program-tags');
  await expect(page.getByRole('heading', { name: 'Reader' })).toBeVisible();
  await expect(page.locator('.notice').first()).toContainText(/Reader ready|Tag on the reader|No NFC reader|PC\/SC|not available|Starting/);
  await page.getByLabel('Batch', { exact: true }).selectOption({ label: `Tags to write (${prefix}, 0/3 written)` });

  // The e2e server's scan base is loopback: only test tags may be written (and only where NFC works).
  await expect(page.getByRole('button', { name: 'Start writing' })).toBeDisabled();
  await page.getByRole('checkbox', { name: 'Test tag (a tag no phone can open)' }).check();
  const usable = !['unavailable', 'no_daemon', 'no_reader'].includes((await api('GET', '/nfc/status')).body.data.reader.state);
  if (usable) await expect(page.getByRole('button', { name: 'Start writing' })).toBeEnabled();

  // Locking asks for a confirmation first.
  await page.getByRole('checkbox', { name: 'Lock each tag after writing' }).check();
  await expect(page.getByRole('button', { name: 'Start writing' })).toBeDisabled();
  await page.getByRole('checkbox', { name: 'Lock each tag after writing' }).uncheck();

  // Where no tag can be written (on this machine pcscd does not run for the e2e server), the
  // button is disabled and says why and what to do, in plain words.
  const blocked = page.locator('[data-nfc-blocked]');
  const reader = (await api('GET', '/nfc/status')).body.data.reader;
  if (['unavailable', 'no_daemon', 'no_reader'].includes(reader.state)) {
    await expect(blocked).toContainText(reader.message);
    if (reader.fix) await expect(blocked).toContainText(reader.fix);
    await expect(page.getByRole('button', { name: 'Start writing' })).toBeDisabled();
    await expect(page.locator('main#main')).not.toContainText(/nfc-pcsc|node_modules|pcsclite/);
    return;
  }
  await page.getByRole('button', { name: 'Start writing' }).click();
  const started = page.getByText(`${prefix}-001`, { exact: true });
  const refused = page.locator('form[aria-label="Start writing a batch"] .notice-error');
  await expect(started.or(refused)).toBeVisible();
  if (await started.isVisible()) {
    await screenshot(page, 'program-tags');
    await page.getByRole('button', { name: 'Skip' }).click();
    await expect(page.getByText(`${prefix}-002`, { exact: true })).toBeVisible();
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(page.getByRole('button', { name: 'Start writing' })).toBeVisible();
  }
});
