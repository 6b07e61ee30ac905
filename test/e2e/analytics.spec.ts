// The node's analytics: a chart with a value axis, dates and each bar's count, and the scans
// broken down by the routing rule that served them.
import { api, expect, openConsole, requireChromium, server, test, unique } from './support.ts';

requireChromium();

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

test('the analytics chart has axes and values, and a breakdown by matched rule', async ({ page }) => {
  const node = (await api('POST', '/nodes', { label: unique('Menu board'), function_type: 'redirect', payload: { url: 'https://example.com/menu' } })).body.data as { slug: string };
  await api('POST', `/nodes/${node.slug}/rules`, { rule_type: 'device_based', conditions: { devices: ['mobile'] }, function_type: 'redirect', payload: { url: 'https://example.com/m' } });
  for (const ua of [IPHONE, IPHONE, DESKTOP]) {
    const res = await fetch(`${server.url}/v/${node.slug}`, { headers: { 'user-agent': ua }, redirect: 'manual' });
    expect(res.status).toBe(302);
  }

  await openConsole(page, `/nodes/${node.slug}`);
  await page.getByRole('tab', { name: 'Scans & analytics' }).click();
  const chart = page.getByRole('figure', { name: /^Scans per day \(UTC\)/ });
  await expect(chart).toBeVisible();

  // Value axis: round gridlines from 0 to the highest bar (3 scans today).
  await expect(chart.locator('.chart-tick')).toHaveText(['0', '1', '2', '3']);
  // Each bar's count above it, and dates under the bars (the last bar is today, UTC).
  const today = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date());
  const bars = chart.getByRole('listitem');
  await expect(bars).toHaveCount(8);
  await expect(bars.last().locator('.chart-value')).toHaveText('3');
  await expect(bars.last()).toContainText(`${today}: 3 scans`);
  await expect(chart.locator('.chart-x').filter({ hasText: /\S/ })).not.toHaveCount(0);
  const valueBox = await bars.last().locator('.chart-value').boundingBox();
  const barBox = await bars.last().locator('.chart-bar').boundingBox();
  expect(valueBox!.y + valueBox!.height).toBeLessThanOrEqual(barBox!.y + 1); // the count sits on top of its bar

  // By matched rule: two scans from phones served by the rule, one by the node's own content.
  const byRule = page.getByRole('list', { name: 'Scans by matched rule' });
  await expect(byRule.getByRole('listitem')).toHaveText(['Rule 1: Device / OS (mobile) → Redirect2', 'The node’s own content1']);
});
