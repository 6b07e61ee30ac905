// axe (WCAG 2.1 A and AA, colour contrast included) on every console screen and every kind of
// scan page, in the light and the dark colour scheme.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { api, expect, openConsole, requireChromium, server, test } from './support.ts';
import { consoleScreens, createFixture, type Fixture, settled } from './screens.ts';

requireChromium();

const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(WCAG).analyze();
  return result.violations.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => `${n.target.join(' ')} ${n.failureSummary?.replace(/\s+/g, ' ') ?? ''}`).join(' | ')}`);
}

/** One node per kind of scan page, plus the status pages, as (name, slug) pairs. */
async function scanPages(): Promise<Array<{ name: string; slug: string }>> {
  const make = async (label: string, function_type: string, payload: Record<string, unknown>, status?: string) => {
    const created = await api('POST', '/nodes', { label, function_type, payload });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const node = created.body.data as { slug: string };
    if (status) await api('PATCH', `/nodes/${node.slug}`, { status });
    return { name: label, slug: node.slug };
  };
  return [
    await make('vCard', 'vcard', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0000', website: 'https://example.com', organization: 'Engines', job_title: 'Analyst' }),
    await make('Wi-Fi', 'wifi', { ssid: 'Guests', security: 'WPA2', password: 'correct horse' }),
    await make('microsite', 'microsite', { title: 'Spring menu', body: 'Fresh dishes.', links: [{ label: 'Book a table', url: 'https://example.com/book' }] }),
    await make('microsite, green theme', 'microsite', { title: 'Garden', theme_color: '#1A7F5A', links: [{ label: 'Visit', url: 'https://example.com' }] }),
    await make('microsite, yellow theme', 'microsite', { title: 'Sunny', theme_color: '#FFCC00', links: [{ label: 'Visit', url: 'https://example.com' }] }),
    await make('digital card', 'digital_card', { name: 'Grace Hopper', job_title: 'Admiral', email: 'grace@example.com', phone: '+1 555 0100', website: 'https://example.com', bio: 'Compilers.', links: [{ label: 'Blog', url: 'https://example.com/blog' }] }),
    await make('SMS action', 'action', { action_type: 'sms', phone: '+1 555 0100', message: 'Hello' }),
    await make('email action', 'action', { action_type: 'email', email: 'desk@example.com', message: 'Hello' }),
    await make('paused', 'redirect', { url: 'https://example.com' }, 'paused'),
    { name: 'not active yet', slug: (await api('POST', '/nodes', { label: 'draft', function_type: 'redirect', payload: { url: 'https://example.com' }, status: 'draft' })).body.data.slug as string },
    { name: 'unknown code', slug: 'ZZZZZZZZ' },
    // Node limits (docs/scans.md "Node limits"): the password page (a form) and the expired page.
    { name: 'password page', slug: (await api('POST', '/nodes', { label: 'gated', function_type: 'redirect', payload: { url: 'https://example.com' }, password: 'open sesame' })).body.data.slug as string },
    { name: 'expired', slug: (await api('POST', '/nodes', { label: 'expired', function_type: 'redirect', payload: { url: 'https://example.com' }, expires_at: '2020-01-01T00:00:00Z' })).body.data.slug as string },
  ];
}

let fixture: Fixture;
let scans: Array<{ name: string; slug: string }>;
test.beforeAll(async () => {
  fixture = await createFixture();
  scans = await scanPages();
});

for (const colorScheme of ['light', 'dark'] as const) {
  test.describe(`${colorScheme} scheme`, () => {
    test.beforeEach(async ({ page }) => {
      await page.emulateMedia({ colorScheme });
    });

    test('every console screen passes axe', async ({ page }) => {
      test.setTimeout(300_000); // about twenty screens, a few seconds of axe each
      const failures: string[] = [];
      await page.goto(`${server.url}/console/`);
      await expect(page.getByRole('heading', { name: 'Sign in to the console' })).toBeVisible();
      failures.push(...(await violations(page)).map((v) => `sign-in: ${v}`));
      for (const screen of consoleScreens(fixture)) {
        await test.step(screen.name, async () => {
          await openConsole(page, screen.path);
          await screen.open?.(page);
          await settled(page);
          failures.push(...(await violations(page)).map((v) => `${screen.name}: ${v}`));
        });
      }
      expect(failures).toEqual([]);
    });

    test('every kind of scan page passes axe', async ({ page }) => {
      test.setTimeout(180_000);
      const failures: string[] = [];
      for (const s of scans) {
        await page.goto(`${server.url}/v/${s.slug}`);
        await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
        failures.push(...(await violations(page)).map((v) => `${s.name}: ${v}`));
      }
      expect(failures).toEqual([]);
    });
  });
}
