import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Page, test as base, expect } from '@playwright/test';

/** Playwright's test, failing any test during which the console threw an uncaught error. */
export const test = base.extend<{ noPageErrors: void }>({
  noPageErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(`${err.message}\n${err.stack ?? ''}`));
      await use();
      expect(errors, 'uncaught errors in the console').toEqual([]);
    },
    { auto: true },
  ],
});
export { expect };
import { needs } from '../support/system.ts';

/** Call at the top of each spec: skips with the reason when Debian's chromium is missing (under CI: fails). */
export function requireChromium(): void {
  const reason = needs.chromium();
  test.skip(reason !== null, reason ?? '');
}

export const server = {
  get url(): string {
    return process.env.WAYMARK_E2E_URL!;
  },
  get key(): string {
    return process.env.WAYMARK_E2E_KEY!;
  },
  get firstKey(): string {
    return process.env.WAYMARK_E2E_FIRST_KEY!;
  },
};

/** The API directly (test setup and checks), with the console's key unless told otherwise. */
export async function api(method: string, path: string, body?: unknown, key: string | null = server.key): Promise<{ status: number; body: any }> /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${server.url}/v1${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Opens the console signed in through the URL fragment, at `path` (e.g. /nodes). */
export async function openConsole(page: Page, path = '/nodes'): Promise<void> {
  await page.goto(`${server.url}/console${path}#key=${server.key}`);
  // The signed-in shell (its navigation may be folded behind the menu button on a phone).
  await expect(page.locator('main#main')).toBeVisible();
}

// docs/screenshots/ (committed, shown in the README) is rewritten only on request, so that an
// ordinary test run leaves the working tree clean: WAYMARK_UPDATE_SCREENSHOTS=1 npm run test:e2e
const shots = process.env.WAYMARK_UPDATE_SCREENSHOTS
  ? join(import.meta.dirname, '..', '..', 'docs', 'screenshots')
  : join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');

/** Saves a screenshot of a main screen (see `shots`). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(shots, { recursive: true });
  await page.evaluate(async () => {
    await document.fonts?.ready;
    // Transient toasts would clutter the pictures (hidden, not removed: React owns those nodes).
    document.querySelectorAll<HTMLElement>('.toasts').forEach((t) => (t.style.visibility = 'hidden'));
  });
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false, animations: 'disabled', caret: 'hide' });
  await page.evaluate(() => document.querySelectorAll<HTMLElement>('.toasts').forEach((t) => (t.style.visibility = '')));
}

export function unique(prefix: string): string {
  return `${prefix} ${Math.random().toString(36).slice(2, 7)}`;
}
