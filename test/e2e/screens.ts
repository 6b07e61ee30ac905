// Every console screen, with the data it needs to show something, for the specs that walk all of
// them (responsive layout, axe, idle traffic). A screen is a path plus, for states reached by a
// click (a node's tabs, an inline form), the step that opens it.
import type { Page } from '@playwright/test';
import { api, expect, server } from './support.ts';

export interface Screen {
  name: string;
  path: string;
  /** Brings the screen into the state under test once its path is open. */
  open?: (page: Page) => Promise<void>;
}

export interface Fixture {
  slug: string;
  batchId: string;
}

/** A node with rules and a few scans, a ready batch, a template and a webhook. */
export async function createFixture(): Promise<Fixture> {
  const node = (await api('POST', '/nodes', {
    label: 'Reception contact with a rather long label that must wrap on a phone',
    function_type: 'vcard',
    payload: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada.lovelace@analytical-engine.example.com', phone: '+44 20 7946 0000', organization: 'Analytical Engines Ltd' },
  })).body.data as { slug: string };
  await api('POST', `/nodes/${node.slug}/rules`, {
    rule_type: 'device_based',
    conditions: { devices: ['mobile'] },
    function_type: 'redirect',
    payload: { url: 'https://example.com/mobile-menu-with-a-long-path/and-more' },
  });
  // Human-looking scans so that the analytics tab shows its chart and breakdowns.
  for (const ua of ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36']) {
    const res = await fetch(`${server.url}/v/${node.slug}`, { headers: { 'user-agent': ua }, redirect: 'manual' });
    await res.arrayBuffer();
  }
  const batch = (await api('POST', '/batches', {
    label: 'Cafe tables, spring',
    prefix: `R${Math.random().toString(36).slice(2, 6).toUpperCase()}`,
    quantity: 3,
    function_type: 'redirect',
    base_payload: { url: 'https://example.com' },
  })).body.data as { id: string };
  await expect.poll(async () => (await api('GET', `/batches/${batch.id}`)).body.data.status, { timeout: 20_000 }).toBe('ready');
  await api('POST', '/templates', { name: 'Company Wi-Fi', function_type: 'wifi', payload: { ssid: 'Guests', security: 'WPA2', password: 'correct horse battery' }, locked_fields: ['ssid'] });
  await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/waymark/a-receiver-with-a-long-address', events: ['node.created', 'batch.completed'] });
  return { slug: node.slug, batchId: batch.id };
}

const tab = (name: string) => async (page: Page) => {
  await page.getByRole('tab', { name }).click();
  await expect(page.getByRole('tab', { name })).toHaveAttribute('aria-selected', 'true');
};

export function consoleScreens(f: Fixture): Screen[] {
  return [
    { name: 'nodes', path: '/nodes' },
    { name: 'new node', path: '/nodes/new' },
    { name: 'import nodes', path: '/nodes/import' },
    { name: 'node overview', path: `/nodes/${f.slug}` },
    { name: 'node rules', path: `/nodes/${f.slug}`, open: tab('Routing rules') },
    { name: 'node analytics', path: `/nodes/${f.slug}`, open: tab('Scans & analytics') },
    { name: 'node label', path: `/nodes/${f.slug}`, open: tab('Print label') },
    { name: 'node NFC', path: `/nodes/${f.slug}`, open: tab('Write NFC tag') },
    { name: 'node tag verification', path: `/nodes/${f.slug}`, open: tab('Tag verification') },
    { name: 'analytics', path: '/analytics' },
    { name: 'batches', path: '/batches' },
    {
      name: 'new batch form',
      path: '/batches',
      open: async (page) => {
        await page.getByRole('button', { name: 'New batch' }).click();
      },
    },
    { name: 'batch', path: `/batches/${f.batchId}` },
    { name: 'program tags', path: '/program-tags' },
    { name: 'print labels', path: `/print?batch=${f.batchId}` },
    { name: 'templates', path: '/templates' },
    {
      name: 'new template form',
      path: '/templates',
      open: async (page) => {
        await page.getByRole('button', { name: 'New template' }).click();
      },
    },
    { name: 'webhooks', path: '/webhooks' },
    { name: 'sync', path: '/sync' },
    { name: 'api keys', path: '/api-keys' },
    { name: 'settings', path: '/settings' },
    { name: 'page not found', path: '/no-such-screen' },
  ];
}

/** Waits until the screen has loaded what it shows (no "Loading…" state, no spinner left). */
export async function settled(page: Page): Promise<void> {
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.locator('.state-loading, .spinner, [aria-busy="true"]')).toHaveCount(0);
}
