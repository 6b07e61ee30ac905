import { readFileSync } from 'node:fs';
import { api, expect, openConsole, requireChromium, screenshot, test, unique } from './support.ts';

requireChromium();

const READER_TITLES: Record<string, RegExp> = {
  ready: /Reader ready/,
  card_present: /Tag on the reader/,
  starting: /Starting the NFC bridge/,
  no_reader: /No NFC reader connected/,
  no_daemon: /PC\/SC service \(pcscd\) is not running/,
  unavailable: /NFC is not available on this machine/,
};

test("prints one node's label: layouts, calibration offsets, preview, PDF named by the server", async ({ page }) => {
  const probe = await api('GET', '/layouts');
  expect(probe.status).toBe(200);
  const layouts = probe.body.data as Array<{ id: string; name: string; kind: string }>;
  const node = (await api('POST', '/nodes', { label: unique('Door label'), function_type: 'redirect', payload: { url: 'https://example.com/door' } })).body.data;

  await openConsole(page, `/nodes/${node.slug}`);
  await page.getByRole('tab', { name: 'Print label' }).click();
  const preview = page.getByTestId('label-preview');
  await expect(preview).toBeVisible();
  const loaded = () => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0 && img.naturalHeight > 0);
  await expect.poll(loaded).toBe(true);

  // Every layout previews (the image is replaced when the options change).
  for (const l of layouts) {
    const before = await preview.getAttribute('src');
    await page.getByLabel('Layout').selectOption(l.id);
    await expect(preview).not.toHaveAttribute('src', before!);
    await expect.poll(loaded).toBe(true);
    await expect(preview).toHaveAttribute('alt', new RegExp(`on ${l.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  }
  const single = layouts.find((l) => l.kind === 'roll') ?? layouts[0]!;
  await page.getByLabel('Layout').selectOption(single.id);

  // Offsets out of range are refused on the field before any request.
  await page.getByLabel('Offset right (mm)').fill('12');
  await expect(page.getByText('A number from −10 to 10')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Download PDF' })).toBeDisabled();
  await page.getByLabel('Offset right (mm)').fill('1.5');
  await page.getByLabel('Offset down (mm)').fill('-0.5');
  await expect.poll(loaded).toBe(true);
  await screenshot(page, 'node-print-label');

  // The e2e server's scan base is loopback: labels print only as a test print.
  await expect(page.getByRole('button', { name: 'Download PDF' })).toBeDisabled();
  await page.getByRole('checkbox', { name: 'Test print (labels no phone can open)' }).check();
  const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PDF' }).click()]);
  expect(pdf.suggestedFilename()).toMatch(/\.pdf$/);
  expect(pdf.suggestedFilename()).not.toBe(`${node.slug}-label.pdf`); // the server's Content-Disposition name, not the fallback
  expect(readFileSync((await pdf.path())!).subarray(0, 5).toString()).toBe('%PDF-');

  // Save the offsets as a printer profile; it becomes the selected profile.
  const name = unique('Office laser');
  await page.getByLabel('Save offsets as a printer profile').fill(name);
  await page.getByRole('button', { name: 'Save profile' }).click();
  await expect(page.getByLabel('Printer profile', { exact: true })).toHaveValue(/.+/);
  await expect(page.getByLabel('Printer profile', { exact: true }).locator('option:checked')).toHaveText(name);
  const printers = (await api('GET', '/printers')).body.data as Array<{ name: string; offset_x: number; offset_y: number }>;
  expect(printers.find((p) => p.name === name)).toMatchObject({ offset_x: 1.5, offset_y: -0.5 });

  const [cal] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Calibration page' }).click()]);
  expect(readFileSync((await cal.path())!).subarray(0, 5).toString()).toBe('%PDF-');
});

test("the node's Write NFC tag tab shows the reader state the server reports", async ({ page }) => {
  const probe = await api('GET', '/nfc/status');
  expect(probe.status).toBe(200);
  const state = probe.body.data.reader.state as string;
  const node = (await api('POST', '/nodes', { label: unique('Gate tag'), function_type: 'redirect', payload: { url: 'https://example.com/gate' } })).body.data;

  await openConsole(page, `/nodes/${node.slug}`);
  await page.getByRole('tab', { name: 'Write NFC tag' }).click();
  await expect(page.getByText(node.serial ?? node.slug, { exact: true })).toBeVisible();
  // The state comes from the event stream; poll the server again in case it moved (e.g. starting → no_daemon).
  const shown = page.locator('[data-reader-state]');
  await expect(shown).toBeVisible();
  await expect
    .poll(async () => ((await shown.getAttribute('data-reader-state')) === (await api('GET', '/nfc/status')).body.data.reader.state ? 'same' : 'different'))
    .toBe('same');
  const now = (await shown.getAttribute('data-reader-state'))!;
  await expect(shown).toContainText(READER_TITLES[now]!);
  const write = page.getByRole('button', { name: 'Write NFC tag' });
  // The e2e server's scan base is loopback: only a test tag may be written.
  await expect(write).toBeDisabled();
  await page.getByRole('checkbox', { name: 'Test tag (a tag no phone can open)' }).check();
  if (['unavailable', 'no_daemon', 'no_reader'].includes(now)) await expect(write).toBeDisabled();
  else await expect(write).toBeEnabled();

  // Locking goes through an explicit confirmation.
  await page.getByRole('checkbox', { name: 'Lock the tag after writing (permanent)' }).check();
  if (await write.isEnabled()) {
    await write.click();
    const dialog = page.getByRole('dialog', { name: 'Lock the tag permanently?' });
    await expect(dialog).toBeVisible();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toBeHidden();
  }
  await screenshot(page, 'node-write-tag');
  test.info().annotations.push({ type: 'reader', description: `${state} → ${now}` });
});
