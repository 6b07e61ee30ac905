import { api, expect, openConsole, requireChromium, screenshot, unique, test } from './support.ts';

requireChromium();

test('adds each kind of routing rule, and the server’s split-weight error lands on the weight', async ({ page }) => {
  const created = await api('POST', '/nodes', { label: unique('Shop window'), function_type: 'redirect', payload: { url: 'https://example.com/home' } });
  const slug = created.body.data.slug as string;
  await openConsole(page, `/nodes/${slug}`);
  await page.getByRole('tab', { name: 'Routing rules' }).click();
  await expect(page.getByText('No rules')).toBeVisible();

  // Time window: weekdays 09:00–17:00 (the default window) plus a weekend window, in Europe/Paris.
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByLabel('Time zone').selectOption('Europe/Paris');
  await page.getByRole('button', { name: 'Add window' }).click();
  await page.getByLabel('Window 2 start').fill('22:00');
  await page.getByLabel('Window 2 end').fill('02:00');
  await page.getByRole('button', { name: 'Sun in window 2' }).click(); // only Saturday stays on
  await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/open');
  await screenshot(page, 'rules-editor');
  await page.getByRole('button', { name: 'Add rule', exact: true }).last().click();
  await expect(page.locator('.rule')).toHaveCount(1);

  // Country.
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByRole('radio', { name: 'Country' }).check();
  await page.getByLabel('Find a country').fill('France');
  await page.getByRole('checkbox', { name: /^France/ }).check();
  await page.getByLabel('Find a country').fill('BE');
  await page.getByRole('checkbox', { name: /^Belgium/ }).check();
  await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/fr');
  await page.getByRole('button', { name: 'Add rule', exact: true }).last().click();
  await expect(page.locator('.rule')).toHaveCount(2);

  // Device / OS.
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByRole('radio', { name: 'Device / OS' }).check();
  await page.getByRole('checkbox', { name: 'Mobile' }).check();
  await page.getByRole('checkbox', { name: 'iOS' }).check();
  await page.getByLabel('Rule serves').selectOption('action');
  await page.getByLabel('Phone', { exact: true }).fill('+33 6 00 00 00 00');
  await page.getByRole('button', { name: 'Add rule', exact: true }).last().click();
  await expect(page.locator('.rule')).toHaveCount(3);

  // Traffic split 60%, remainder shown.
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByRole('radio', { name: 'Traffic split' }).check();
  await page.getByLabel('Weight (%)').fill('60');
  await expect(page.getByTestId('split-remainder')).toContainText('remainder (the node’s own payload): 40%');
  await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/b');
  await page.getByRole('button', { name: 'Add rule', exact: true }).last().click();
  await expect(page.locator('.rule')).toHaveCount(4);

  // A second split of 50% passes the client (1..100) but not the server (sum ≤ 100).
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByRole('radio', { name: 'Traffic split' }).check();
  await page.getByLabel('Weight (%)').fill('50');
  await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/c');
  await page.getByRole('button', { name: 'Add rule', exact: true }).last().click();
  await expect(page.getByText('The server did not accept the rule')).toBeVisible();
  await expect(page.getByText('Weight split weights of a node must sum to at most 100 (40 left)')).toBeVisible();
  await expect(page.getByLabel('Weight (%)')).toHaveAttribute('aria-invalid', 'true');
  await page.getByRole('button', { name: 'Cancel' }).click();

  const rules = (await api('GET', `/nodes/${slug}/rules`)).body.data as Array<{ rule_type: string; conditions: Record<string, unknown>; function_type: string }>;
  const byType = Object.fromEntries(rules.map((r) => [r.rule_type, r]));
  expect(Object.keys(byType).sort()).toEqual(['device_based', 'geo_based', 'time_based', 'traffic_split']);
  expect(byType.time_based!.conditions).toEqual({
    timezone: 'Europe/Paris',
    windows: [
      { days: [1, 2, 3, 4, 5], start_time: '09:00', end_time: '17:00' },
      { days: [6], start_time: '22:00', end_time: '02:00' },
    ],
  });
  expect(byType.geo_based!.conditions).toEqual({ countries: ['FR', 'BE'] });
  expect(byType.device_based!.conditions).toEqual({ devices: ['mobile'], os: ['ios'] });
  expect(byType.device_based!.function_type).toBe('action');
  expect(byType.traffic_split!.conditions).toEqual({ weight: 60 });

  // Disable one, then delete it.
  await page.getByRole('checkbox', { name: 'Rule Country enabled' }).uncheck();
  await expect.poll(async () => ((await api('GET', `/nodes/${slug}/rules`)).body.data as Array<{ rule_type: string; enabled: boolean }>).find((r) => r.rule_type === 'geo_based')?.enabled).toBe(false);
  await page.locator('.rule', { hasText: 'Country' }).getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete rule' }).click();
  await expect(page.locator('.rule')).toHaveCount(3);
  await screenshot(page, 'rules');
});
