import type { Page } from '@playwright/test';
import { api, expect, openConsole, requireChromium, screenshot, unique, test } from './support.ts';

requireChromium();

async function startNode(page: Page, typeLabel: string, label: string) {
  await openConsole(page, '/nodes/new');
  await page.getByRole('radio', { name: new RegExp(`^${typeLabel}`) }).check();
  await page.getByLabel('Label', { exact: true }).fill(label);
}

async function submitAndOpen(page: Page, label: string) {
  await page.getByRole('button', { name: 'Create node' }).click();
  await expect(page.getByRole('heading', { name: label })).toBeVisible();
  return page.url().split('/').pop()!;
}

test('creates one node of every type through the forms', async ({ page }) => {
  const made: Record<string, string> = {};

  let label = 'Door redirect';
  await startNode(page, 'Redirect', label);
  await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/menu');
  await screenshot(page, 'node-create');
  made.redirect = await submitAndOpen(page, label);

  label = 'Reception contact';
  await startNode(page, 'vCard contact', label);
  await page.getByLabel('First name', { exact: true }).fill('Ada');
  await page.getByLabel('Last name', { exact: true }).fill('Lovelace');
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Phone', { exact: true }).fill('+44 20 7946 0000');
  made.vcard = await submitAndOpen(page, label);

  label = 'Guest Wi-Fi';
  await startNode(page, 'Wi-Fi', label);
  await page.getByLabel('Network name (SSID)').fill('Guests');
  await page.getByLabel('Security', { exact: true }).selectOption('WPA2');
  await page.getByLabel('Password', { exact: true }).fill('correct horse');
  made.wifi = await submitAndOpen(page, label);

  label = 'WhatsApp us';
  await startNode(page, 'Action', label);
  await page.getByLabel('Action', { exact: true }).selectOption('whatsapp');
  await page.getByLabel('Phone', { exact: true }).fill('+33 6 12 34 56 78');
  await page.getByLabel('Message', { exact: true }).fill('Hello from table 4');
  made.action = await submitAndOpen(page, label);

  label = 'Spring menu';
  await startNode(page, 'Microsite', label);
  await page.getByLabel('Title', { exact: true }).fill('Spring menu');
  await page.getByLabel('Body', { exact: true }).fill('Fresh dishes every day.');
  await page.getByLabel('Theme colour', { exact: true }).fill('#1A7F5A');
  await page.getByRole('button', { name: 'Add link' }).click();
  await page.getByLabel('Link 1 label').fill('Book a table');
  await page.getByLabel('Link 1 URL').fill('https://example.com/book');
  made.microsite = await submitAndOpen(page, label);

  label = 'Sales card';
  await startNode(page, 'Digital card', label);
  await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
  await page.getByLabel('Job title', { exact: true }).fill('Engineer');
  await page.getByLabel('Website', { exact: true }).fill('https://example.com');
  made.digital_card = await submitAndOpen(page, label);

  for (const [type, slug] of Object.entries(made)) {
    const res = await api('GET', `/nodes/${slug}`);
    expect(res.status).toBe(200);
    expect(res.body.data.function_type).toBe(type);
    expect(res.body.data.status).toBe('active');
  }
  expect((await api('GET', `/nodes/${made.microsite}`)).body.data.payload).toEqual({
    title: 'Spring menu',
    body: 'Fresh dishes every day.',
    theme_color: '#1A7F5A',
    links: [{ label: 'Book a table', url: 'https://example.com/book' }],
  });
  expect((await api('GET', `/nodes/${made.wifi}`)).body.data.payload).toEqual({ ssid: 'Guests', security: 'WPA2', password: 'correct horse' });

  await openConsole(page, '/nodes');
  await expect(page.getByRole('table', { name: 'Nodes' }).getByRole('row')).toHaveCount(await countRows());
  await screenshot(page, 'nodes');
});

async function countRows(): Promise<number> {
  const total = (await api('GET', '/nodes?limit=25')).body.data.length as number;
  return total + 1; // header row
}

test('validation errors land on the right fields, from the client and from the server', async ({ page }) => {
  // Client side (same zod schemas as the server): missing and malformed fields.
  await startNode(page, 'Wi-Fi', '');
  await page.getByLabel('Password', { exact: true }).fill('short');
  await page.getByRole('button', { name: 'Create node' }).click();
  await expect(page.getByLabel('Label', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText('Label must not be empty')).toBeVisible();
  await expect(page.getByText('Network name (SSID) is required')).toBeVisible();
  await page.getByLabel('Label', { exact: true }).fill(unique('Wi-Fi'));
  await page.getByLabel('Network name (SSID)').fill('Office');
  await page.getByRole('button', { name: 'Create node' }).click();
  await expect(page.getByText('Password must be 8 to 63 characters for WPA')).toBeVisible();
  await expect(page.getByLabel('Password', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByLabel('Label', { exact: true })).not.toHaveAttribute('aria-invalid', 'true');

  // Server side: the template is deleted between choosing it and submitting; the 422's
  // details ({template_id: 'Template not found'}) mark the Template field.
  const template = await api('POST', '/templates', { name: unique('Doomed template'), function_type: 'redirect', payload: { url: 'https://example.com/t' } });
  expect(template.status).toBe(201);
  await startNode(page, 'Redirect', unique('Templated'));
  await page.getByLabel('Template').selectOption(template.body.data.id);
  await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/x');
  expect((await api('DELETE', `/templates/${template.body.data.id}`)).status).toBe(200);
  await page.getByRole('button', { name: 'Create node' }).click();
  await expect(page.getByText('The server did not accept the node: Validation failed.')).toBeVisible();
  await expect(page.getByText('Template: Template not found')).toBeVisible();
  await expect(page.getByLabel('Template')).toHaveAttribute('aria-invalid', 'true');
});

test('edits, pauses, reports lost and deletes a node', async ({ page }) => {
  const created = await api('POST', '/nodes', { label: unique('Lobby'), function_type: 'redirect', payload: { url: 'https://example.com/a' } });
  const slug = created.body.data.slug as string;
  await openConsole(page, `/nodes/${slug}`);

  // Edit label and payload.
  const newLabel = unique('Lobby screen');
  await page.getByLabel('Label', { exact: true }).fill(newLabel);
  await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/b');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('heading', { name: newLabel })).toBeVisible();
  const node = (await api('GET', `/nodes/${slug}`)).body.data;
  expect(node.label).toBe(newLabel);
  expect(node.payload).toEqual({ url: 'https://example.com/b' });

  // Change type: the payload is replaced and must be complete for the new type.
  await page.getByLabel('Type').selectOption('wifi');
  await page.getByLabel('Network name (SSID)').fill('Lobby');
  await page.getByLabel('Security', { exact: true }).selectOption('nopass');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect.poll(async () => (await api('GET', `/nodes/${slug}`)).body.data.function_type).toBe('wifi');
  expect((await api('GET', `/nodes/${slug}`)).body.data.payload).toEqual({ ssid: 'Lobby', security: 'nopass' });
  await screenshot(page, 'node-detail');

  // Pause, resume, report lost.
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.locator('.page-header').getByText('Paused', { exact: true })).toBeVisible();
  expect((await api('GET', `/nodes/${slug}`)).body.data.status).toBe('paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await expect.poll(async () => (await api('GET', `/nodes/${slug}`)).body.data.status).toBe('active');
  await page.getByRole('button', { name: 'Report lost' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Report lost' }).click();
  await expect.poll(async () => (await api('GET', `/nodes/${slug}`)).body.data.status).toBe('lost');

  // Delete, with confirmation (Cancel first keeps it).
  await page.getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByRole('dialog')).toContainText('never reused');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  expect((await api('GET', `/nodes/${slug}`)).status).toBe(200);
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete node' }).click();
  await expect(page.getByRole('heading', { name: 'Nodes' })).toBeVisible();
  expect((await api('GET', `/nodes/${slug}`)).status).toBe(404);
});

test('filters and searches the node list on the server', async ({ page }) => {
  const tag = Math.random().toString(36).slice(2, 8);
  for (let i = 0; i < 3; i++) await api('POST', '/nodes', { label: `Find ${tag} ${i}`, function_type: 'redirect', payload: { url: 'https://example.com' } });
  await api('POST', '/nodes', { label: `Find ${tag} wifi`, function_type: 'wifi', payload: { ssid: 'x', security: 'nopass' } });
  await openConsole(page, '/nodes');
  await page.getByLabel('Search').fill(tag);
  await expect(page).toHaveURL(new RegExp(`q=${tag}`));
  await expect(page.getByRole('table', { name: 'Nodes' }).getByRole('row')).toHaveCount(5);
  await page.getByLabel('Type').selectOption('wifi');
  await expect(page.getByRole('table', { name: 'Nodes' }).getByRole('row')).toHaveCount(2);
  await page.getByLabel('Status').selectOption('paused');
  await expect(page.getByText('No nodes match these filters')).toBeVisible();
});

test('shows the QR code, downloads it, and lists scans and analytics', async ({ page }) => {
  const created = await api('POST', '/nodes', { label: 'Poster by the lift', function_type: 'redirect', payload: { url: 'https://example.com/poster' } });
  const { slug, url } = created.body.data as { slug: string; url: string };
  const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
  for (let i = 0; i < 3; i++) {
    const res = await fetch(url, { redirect: 'manual', headers: { 'user-agent': iphone } });
    expect(res.status).toBe(302);
  }
  await expect.poll(async () => (await api('GET', `/nodes/${slug}`)).body.data.scan_count, { timeout: 10_000 }).toBe(3);

  await openConsole(page, `/nodes/${slug}`);
  const qr = page.getByRole('img', { name: `QR code for ${url}` });
  await expect(qr).toBeVisible();
  expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  const [png] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PNG' }).click()]);
  expect(png.suggestedFilename()).toBe(`waymark-${slug}.png`);

  await page.getByRole('tab', { name: 'Scans & analytics' }).click();
  await expect(page.locator('.big-number')).toContainText('3');
  await expect(page.getByRole('table', { name: 'Scans' }).getByRole('row')).toHaveCount(4);
  await expect(page.getByRole('table', { name: 'Scans' })).toContainText('ios');
  await screenshot(page, 'node-analytics');
});
