// A quiet console: an idle tab sends no API requests (live screens follow event streams instead
// of polling), so the console's own traffic does not eat a developer key's 100 requests a minute.
// Deterministic: the page's timers run on Playwright's fake clock, a simulated minute is played
// at once, and the page counts the requests it starts (fetch calls), not time.
import type { Page } from '@playwright/test';
import { expect, openConsole, requireChromium, test } from './support.ts';
import { consoleScreens, createFixture, type Fixture, settled } from './screens.ts';

requireChromium();

let fixture: Fixture;
test.beforeAll(async () => {
  fixture = await createFixture();
});

test.beforeEach(async ({ context }) => {
  // Every API request a page starts, by path (the console's only way to the server is fetch).
  await context.addInitScript(() => {
    const counted: string[] = [];
    (window as unknown as { __apiRequests: string[] }).__apiRequests = counted;
    const original = window.fetch.bind(window);
    window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, location.href);
      if (url.pathname.startsWith('/v1/')) counted.push(url.pathname);
      return original(input, init);
    };
  });
  await context.clock.install();
});

/** Lets the tasks the page queued (React renders and effects after the timers fired) run. */
async function drain(page: Page): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await page.evaluate(() => new Promise<void>((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    }));
  }
}

/** The requests an idle page starts during a simulated minute. */
async function idleMinute(page: Page): Promise<string[]> {
  // The page's clock (fake, flowing since install) is the reference, not the test's.
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);
  await drain(page);
  const before = await page.evaluate(() => (window as unknown as { __apiRequests: string[] }).__apiRequests.length);
  await page.clock.runFor(60_000);
  await drain(page);
  return page.evaluate((n) => (window as unknown as { __apiRequests: string[] }).__apiRequests.slice(n), before);
}

test('Program tags and Sync, left open, send no requests in a minute (they polled 40 and 20 times)', async ({ page, context }) => {
  await openConsole(page, '/program-tags');
  await settled(page);
  await expect(page.getByRole('heading', { name: 'Reader' })).toBeVisible();
  const second = await context.newPage();
  await openConsole(second, '/sync');
  await settled(second);
  await expect(second.getByRole('form', { name: 'Pair with a remote' })).toBeVisible();

  expect(await idleMinute(page)).toEqual([]);
  expect(await idleMinute(second)).toEqual([]);
  // Each live screen holds one stream per source: NFC (the page and its banner share it) and sync.
  const streams = await page.evaluate(() => (window as unknown as { __apiRequests: string[] }).__apiRequests.filter((p) => p.endsWith('/events')));
  expect(streams.sort()).toEqual(['/v1/nfc/events', '/v1/sync/events']);
});

test('no console screen polls while idle', async ({ page }) => {
  test.setTimeout(180_000);
  const noisy: string[] = [];
  for (const screen of consoleScreens(fixture)) {
    await test.step(screen.name, async () => {
      await openConsole(page, screen.path);
      await screen.open?.(page);
      await settled(page);
      const requests = await idleMinute(page);
      if (requests.length > 0) noisy.push(`${screen.name}: ${requests.length} requests (${[...new Set(requests)].join(', ')})`);
      await page.clock.resume();
    });
  }
  expect(noisy).toEqual([]);
});
