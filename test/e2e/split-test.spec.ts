import { api, expect, openConsole, requireChromium, screenshot, server, unique, test } from './support.ts';

requireChromium();

test('shows each split variant’s scans and unique visitors, and promotes one', async ({ page }) => {
  const created = await api('POST', '/nodes', { label: unique('Poster A/B'), function_type: 'redirect', payload: { url: 'https://example.com/a' } });
  const slug = created.body.data.slug as string;
  for (const [weight, url] of [
    [50, 'https://example.com/b'],
    [30, 'https://example.com/c'],
  ] as const) {
    const rule = await api('POST', `/nodes/${slug}/rules`, { rule_type: 'traffic_split', conditions: { weight }, function_type: 'redirect', payload: { url } });
    expect(rule.status).toBe(201);
  }

  // 40 visitors (the server sees one address, so each User-Agent is a visitor); every third
  // scans twice. The variant each got is read from its redirect.
  const tally = new Map<string, { scans: number; visitors: number }>([
    ['https://example.com/b', { scans: 0, visitors: 0 }],
    ['https://example.com/c', { scans: 0, visitors: 0 }],
    ['https://example.com/a', { scans: 0, visitors: 0 }],
  ]);
  for (let i = 0; i < 40; i++) {
    const ua = `Mozilla/5.0 (iPhone; CPU iPhone OS 17_${i} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.${i} Mobile/15E148 Safari/604.1`;
    for (let k = 0; k < (i % 3 === 0 ? 2 : 1); k++) {
      const res = await fetch(`${server.url}/v/${slug}`, { headers: { 'user-agent': ua }, redirect: 'manual' });
      const t = tally.get(res.headers.get('location') ?? '')!;
      t.scans++;
      if (k === 0) t.visitors++;
    }
  }

  await openConsole(page, `/nodes/${slug}`);
  await page.getByRole('tab', { name: 'Scans & analytics' }).click();
  const table = page.getByTestId('split-test');
  await expect(table).toBeVisible();
  const rows = [
    ['Variant A', '50%', tally.get('https://example.com/b')!, 'Redirect: https://example.com/b'],
    ['Variant B', '30%', tally.get('https://example.com/c')!, 'Redirect: https://example.com/c'],
    ['Node’s own payload', '20%', tally.get('https://example.com/a')!, 'Redirect: https://example.com/a'],
  ] as const;
  for (const [name, share, t, serves] of rows) {
    const cells = table.getByRole('row', { name: new RegExp(`^${name}`) }).getByRole('cell');
    await expect(cells.nth(1)).toHaveText(serves);
    await expect(cells.nth(2)).toHaveText(share);
    await expect(cells.nth(3)).toHaveText(String(t.scans));
    await expect(cells.nth(4)).toHaveText(String(t.visitors));
  }

  await table.scrollIntoViewIfNeeded();
  await screenshot(page, 'split-test');

  await page.getByRole('button', { name: 'Promote Variant B' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText('Redirect: https://example.com/c becomes the node’s payload');
  await dialog.getByRole('button', { name: 'Promote' }).click();
  await expect(page.getByText('Variant B promoted')).toBeVisible();
  await expect(table).toBeHidden();

  const node = (await api('GET', `/nodes/${slug}`)).body.data;
  expect(node.payload).toEqual({ url: 'https://example.com/c' });
  expect((await api('GET', `/nodes/${slug}/rules`)).body.total).toBe(0);
  // The node page shows the promoted payload too (it was reloaded).
  await page.getByRole('tab', { name: 'Overview' }).click();
  await expect(page.getByLabel('Destination URL')).toHaveValue('https://example.com/c');
});
