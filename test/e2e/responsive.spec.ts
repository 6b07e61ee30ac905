// The console on phones and tablets: no screen scrolls sideways, the navigation collapses behind
// a menu button that works, and tables turn into lists on a phone.
import type { Page } from '@playwright/test';
import { expect, openConsole, requireChromium, server, test } from './support.ts';
import { consoleScreens, createFixture, type Fixture, settled } from './screens.ts';

requireChromium();

const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'tablet', width: 768, height: 1024 },
];

let fixture: Fixture;
test.beforeAll(async () => {
  fixture = await createFixture();
});

/** The widest element sticking out past the right edge, to name the culprit when a check fails. */
async function overflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number; widest: string }> {
  return page.evaluate(() => {
    let widest = '';
    let right = window.innerWidth;
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      const r = el.getBoundingClientRect();
      if (r.right > right + 0.5) {
        right = r.right;
        widest = `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''} (right edge ${Math.round(r.right)})`;
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, widest };
  });
}

for (const vp of VIEWPORTS) {
  test.describe(`${vp.name} ${vp.width}×${vp.height}`, () => {
    test.use({ viewport: { width: vp.width, height: vp.height } });

    test('the sign-in screen fits the width', async ({ page }) => {
      await page.goto(`${server.url}/console/`);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      const o = await overflow(page);
      expect(o.scrollWidth, `sign-in overflows: ${o.widest}`).toBeLessThanOrEqual(o.innerWidth);
    });

    test('no console screen scrolls sideways', async ({ page }) => {
      const failures: string[] = [];
      for (const screen of consoleScreens(fixture)) {
        await test.step(screen.name, async () => {
          await openConsole(page, screen.path);
          await screen.open?.(page);
          await settled(page);
          const o = await overflow(page);
          if (o.scrollWidth > o.innerWidth) failures.push(`${screen.name}: ${o.scrollWidth} px > ${o.innerWidth} px, ${o.widest}`);
        });
      }
      expect(failures).toEqual([]);
    });

    test('the navigation collapses behind a menu button that opens it and goes to another screen', async ({ page }) => {
      await openConsole(page, '/nodes');
      const menu = page.getByRole('button', { name: 'Menu' });
      const nav = page.getByRole('navigation', { name: 'Main' });
      await expect(menu).toBeVisible();
      await expect(menu).toHaveAttribute('aria-expanded', 'false');
      await expect(nav.getByRole('link', { name: 'Batches' })).toBeHidden();

      await menu.click();
      await expect(menu).toHaveAttribute('aria-expanded', 'true');
      await nav.getByRole('link', { name: 'Batches' }).click();
      await expect(page.getByRole('heading', { name: 'Batches', level: 1 })).toBeVisible();
      await expect(page).toHaveURL(/\/console\/batches$/);
      // Going somewhere closes the menu again.
      await expect(menu).toHaveAttribute('aria-expanded', 'false');
      await expect(nav.getByRole('link', { name: 'Nodes' })).toBeHidden();

      // Escape closes it too, and gives the focus back to the button.
      await menu.click();
      await expect(nav.getByRole('link', { name: 'Sync' })).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(nav.getByRole('link', { name: 'Sync' })).toBeHidden();
      await expect(menu).toBeFocused();
    });
  });
}

test.describe('phone 390×844', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('tables become lists: each cell carries its column name', async ({ page }) => {
    await openConsole(page, '/batches');
    await settled(page);
    const row = page.getByRole('table', { name: 'Batches' }).locator('tbody tr').first();
    await expect(page.getByRole('table', { name: 'Batches' }).locator('thead')).toBeHidden();
    // A card per row: the cells stack (each starts at the row's left edge) with their labels.
    const cells = row.locator('td');
    const lefts = await cells.evaluateAll((tds) => tds.map((td) => Math.round(td.getBoundingClientRect().left)));
    expect(new Set(lefts).size).toBe(1);
    const label = await cells.nth(1).evaluate((td) => getComputedStyle(td, '::before').content);
    expect(label).toBe('"Prefix"');
  });
});

test.describe('desktop 1280×860', () => {
  test('the sidebar shows the navigation without a menu button', async ({ page }) => {
    await openConsole(page, '/nodes');
    await expect(page.getByRole('button', { name: 'Menu' })).toBeHidden();
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Batches' })).toBeVisible();
    await expect(page.getByRole('table', { name: 'Nodes' }).locator('thead')).toBeVisible();
  });
});
