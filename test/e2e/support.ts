import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Page, expect, test } from '@playwright/test';
import { CHROMIUM } from '../../playwright.config.ts';

export const hasChromium = existsSync(CHROMIUM);
/** Call at the top of each spec: skips with the reason when Debian's chromium is missing. */
export function requireChromium(): void {
  test.skip(!hasChromium, `needs ${CHROMIUM}: install the Debian package chromium`);
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
export async function api(method: string, path: string, body?: unknown, key: string | null = server.key): Promise<{ status: number; body: any }> {
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
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
}

const shots = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');

/** Saves a screenshot of a main screen into docs/screenshots/ (committed, shown in the README). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(shots, { recursive: true });
  await page.evaluate(async () => {
    await document.fonts?.ready;
    // Transient toasts would clutter the pictures.
    document.querySelectorAll('.toast').forEach((t) => t.remove());
  });
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false, animations: 'disabled', caret: 'hide' });
}

export function unique(prefix: string): string {
  return `${prefix} ${Math.random().toString(36).slice(2, 7)}`;
}
