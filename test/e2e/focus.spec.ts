// Keyboard focus where axe cannot see it: inline forms take the focus when they open and give it
// back when they close, a refused submit moves it to the first invalid field, and the focus ring
// reaches 3:1 against white and against the sidebar.
import type { Locator, Page } from '@playwright/test';
import { expect, openConsole, requireChromium, test } from './support.ts';

requireChromium();

/** Presses Tab until `target` has the focus (a keyboard user's path to it). */
async function tabTo(page: Page, target: Locator, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error('Tab never reached the element');
}

/** WCAG contrast of the focused element's outline against a background colour (CSS rgb()). */
async function ringContrast(target: Locator, background: string): Promise<{ ratio: number; width: number; style: string }> {
  return target.evaluate((el, bg) => {
    const cs = getComputedStyle(el);
    const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
    const lum = (c: string) => {
      const [r, g, b] = rgb(c).map((v) => {
        const s = v / 255;
        return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      }) as [number, number, number];
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const [hi, lo] = [lum(cs.outlineColor), lum(bg)].sort((a, b) => b - a) as [number, number];
    return { ratio: (hi + 0.05) / (lo + 0.05), width: Number.parseFloat(cs.outlineWidth), style: cs.outlineStyle };
  }, background);
}

test('the focus ring reaches 3:1 on white, on the page and on the sidebar', async ({ page }) => {
  await openConsole(page, '/nodes');
  // Tab only once the screen has settled: a part that renders late (the filters, the sync
  // indicator) can take the focus back to the page's start mid-walk.
  await expect(page.getByRole('searchbox', { name: 'Search' })).toBeVisible();
  await expect(page.getByRole('link', { name: /^Sync: / })).toBeVisible();
  const sidebarColor = await page.locator('.sidebar').evaluate((el) => getComputedStyle(el).backgroundColor);
  const link = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Batches' });
  await tabTo(page, link);
  const onSidebar = await ringContrast(link, sidebarColor);
  expect(onSidebar.style).toBe('solid');
  expect(onSidebar.width).toBeGreaterThanOrEqual(2);
  expect(onSidebar.ratio).toBeGreaterThanOrEqual(3);

  const search = page.getByLabel('Search');
  await tabTo(page, search);
  const onWhite = await ringContrast(search, 'rgb(255, 255, 255)');
  expect(onWhite.width).toBeGreaterThanOrEqual(2);
  expect(onWhite.ratio).toBeGreaterThanOrEqual(3);
  const pageColor = await page.locator('body').evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  expect((await ringContrast(search, pageColor)).ratio).toBeGreaterThanOrEqual(3);
});

test('New batch: the form takes the focus, a refused submit moves it to the first invalid field, Cancel gives it back', async ({ page }) => {
  await openConsole(page, '/batches');
  const open = page.getByRole('button', { name: 'New batch' });
  await tabTo(page, open);
  await page.keyboard.press('Enter');
  const form = page.getByRole('form', { name: 'New batch' });
  await expect(form.getByLabel('Batch label')).toBeFocused();

  await form.getByRole('button', { name: 'Create batch' }).click();
  await expect(form.getByText('Some fields need attention.')).toBeVisible();
  await expect(form.getByLabel('Batch label')).toBeFocused();

  await form.getByLabel('Batch label').fill('Focus test');
  await form.getByRole('button', { name: 'Create batch' }).click();
  await expect(form.getByLabel('Serial prefix')).toBeFocused();

  await form.getByLabel('Serial prefix').fill('FOC');
  await form.getByLabel('Quantity').fill('900');
  await form.getByRole('button', { name: 'Create batch' }).click();
  await expect(form.getByLabel('Quantity')).toBeFocused();

  await form.getByRole('button', { name: 'Cancel' }).click();
  await expect(form).toHaveCount(0);
  await expect(open).toBeFocused();
});

test('New template: the form takes the focus and a refused submit moves it to the first invalid field', async ({ page }) => {
  await openConsole(page, '/templates');
  await page.getByRole('button', { name: 'New template' }).click();
  const form = page.getByRole('form', { name: 'New template' });
  await expect(form.getByLabel('Template name')).toBeFocused();
  await form.getByRole('button', { name: 'Create template' }).click();
  await expect(form.getByText('Some fields need attention.')).toBeVisible();
  await expect(form.getByLabel('Template name')).toBeFocused();
  await form.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('button', { name: 'New template' })).toBeFocused();
});

test('New node: a refused submit moves the focus to the first invalid field, also below the fold', async ({ page }) => {
  await openConsole(page, '/nodes/new');
  await page.getByLabel('Label', { exact: true }).fill('Focus node');
  await page.getByRole('button', { name: 'Create node' }).click();
  const url = page.getByLabel('Destination URL', { exact: true });
  await expect(url).toBeFocused();
  await expect(url).toBeInViewport();
});
