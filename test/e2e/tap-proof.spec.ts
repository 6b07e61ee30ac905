// The node page's "Tag verification" tab: the explanation, the tap proof policy (GET/PUT
// /v1/nodes/{slug}/tap-proof) and the node's scans by source; the policy chosen here decides what
// a tag URL whose mirror fails gets at /v/<slug>.
import { api, expect, openConsole, requireChromium, screenshot, server, test, unique } from './support.ts';

requireChromium();

const PHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

async function scan(slug: string, query = ''): Promise<Response> {
  return fetch(`${server.url}/v/${slug}${query}`, { headers: { 'user-agent': PHONE }, redirect: 'manual' });
}

test('Tag verification: explains what a verified tap is, shows the scans by source, and switches the policy to refuse', async ({ page }) => {
  const node = (await api('POST', '/nodes', { label: unique('Plant room'), function_type: 'redirect', payload: { url: 'https://example.com/plant' } })).body.data as { slug: string };
  // A QR scan, a plain tag URL and a tag URL whose mirror is not UIDxCOUNTER (a failed check).
  expect((await scan(node.slug)).status).toBe(302);
  expect((await scan(node.slug, '?nfc')).status).toBe(302);
  expect((await scan(node.slug, '?nfc&m=not-a-mirror')).status).toBe(302); // policy serve: content as usual
  await expect
    .poll(async () => (await api('GET', `/nodes/${node.slug}/analytics`)).body.data.breakdowns.source, { timeout: 20_000 })
    .toEqual(expect.arrayContaining([{ value: 'qr', scans: 1 }, { value: 'nfc_unverified', scans: 2 }]));

  await openConsole(page, `/nodes/${node.slug}`);
  await page.getByRole('tab', { name: 'Tag verification' }).click();
  const help = page.locator('[data-tap-proof-help]');
  await expect(help).toContainText('NTAG 424 DNA');
  await expect(help).toContainText('NTAG213/215/216 tags cannot prove a tap');
  await expect(page.getByText('No tag of this node is checked at scan time')).toBeVisible();
  const sources = page.locator('[data-source-breakdown]');
  await expect(sources.locator('dt')).toHaveText(['NFC link, not verified', 'QR code']);
  await expect(sources.locator('dd')).toHaveText(['2', '1']);

  const serve = page.getByRole('radio', { name: /Serve as usual and record it/ });
  const refuse = page.getByRole('radio', { name: /Show “This tag could not be verified”/ });
  await expect(serve).toBeChecked();
  await refuse.check();
  // No NTAG 424 DNA on this node: the console says what refusing would (not) do.
  await expect(page.getByText(/No NTAG 424 DNA is registered for this node, so none of its tags proves a tap/)).toBeVisible();
  await screenshot(page, 'node-tag-verification');
  await page.getByRole('button', { name: 'Save policy' }).click();
  await expect(page.getByText('Tag verification policy saved')).toBeVisible();
  expect((await api('GET', `/nodes/${node.slug}/tap-proof`)).body.data.policy).toBe('refuse');

  // Saved, and effective: the failing tag URL now gets the "could not be verified" page; a plain one is served.
  const refused = await scan(node.slug, '?nfc&m=not-a-mirror');
  expect(refused.status).toBe(403);
  expect(await refused.text()).toContain('could not be verified');
  expect((await scan(node.slug, '?nfc')).status).toBe(302);

  // Reloaded, the tab shows the stored policy.
  await page.reload();
  await page.getByRole('tab', { name: 'Tag verification' }).click();
  await expect(page.getByRole('radio', { name: /Show “This tag could not be verified”/ })).toBeChecked();
});
