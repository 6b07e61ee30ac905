// One real tag write through the node page's "Write NFC tag" tab: pcscd + vpcd with a virtual
// NTAG215 from test/nfc (the same harness as the NFC suites), and a server of its own started
// in-process with the bridge pointed at that pcscd. Skips with a one-line reason without them.
import { rmSync } from 'node:fs';
import { startServer, type RunningServer } from '../../server/serve.ts';
import { tempDataDir } from '../support/server.ts';
import { nfcSkipReason, startPcscSandbox, type PcscSandbox } from '../nfc/harness.ts';
import { join } from 'node:path';
import { expectedNdefUri } from '../nfc/support.ts';
import { ATR_MIFARE_CLASSIC_1K, VirtualTag } from '../nfc/virtual-tag.ts';
import { expect, requireChromium, screenshot, test } from './support.ts';

requireChromium();
const skip = nfcSkipReason();
test.skip(skip !== null, skip ?? '');

let sandbox: PcscSandbox | undefined;
let server: RunningServer | undefined;
let dataDir: string | undefined;
let key = '';
let base = '';

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> /* eslint-disable-line @typescript-eslint/no-explicit-any */ {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

test.beforeAll(async () => {
  sandbox = await startPcscSandbox();
  dataDir = tempDataDir('waymark-e2e-nfc-');
  server = await startServer({
    host: '127.0.0.1',
    port: 0,
    dataDir,
    // Tags are permanent: a loopback scan base would refuse the writes (test/api/scan-domain.test.ts).
    scanBase: 'https://wm.example',
    logger: { info: () => {}, error: (m, e) => console.error(m, e) },
    nfc: { env: { ...process.env, ...sandbox.env }, restartDelayMs: 200 },
  });
  const big = { standard_per_minute: 100_000, batch_per_minute: 1000, burst_per_second: 10_000 };
  key = (await server.app.services.keys.createKey(server.firstRun!.orgId, 'e2e nfc', 'enterprise', big)).apiKey;
  base = `http://127.0.0.1:${new URL(server.url).port}`;
  await expect.poll(async () => (await call('GET', '/nfc/status')).body.data.reader.state, { timeout: 20_000 }).toBe('ready');
});

test.afterAll(async () => {
  await server?.close();
  await sandbox?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('writes a node to a tag from the node page, with success feedback', async ({ page }) => {
  const node = (await call('POST', '/nodes', { label: 'Pump room', function_type: 'redirect', payload: { url: 'https://example.com/pump' } })).body.data;
  await page.goto(`${base}/console/nodes/${node.slug}#key=${key}`);
  await page.getByRole('tab', { name: 'Write NFC tag' }).click();
  await expect(page.locator('[data-reader-state]')).toHaveAttribute('data-reader-state', 'ready');

  const tag = new VirtualTag({ model: 'NTAG215' });
  await tag.insert(sandbox!.endpoint(0));
  await expect(page.locator('[data-reader-state]')).toHaveAttribute('data-reader-state', 'card_present');
  await page.getByRole('button', { name: 'Write NFC tag' }).click();
  const ok = page.locator('[data-outcome="success"]');
  await expect(ok).toBeVisible({ timeout: 30_000 });
  await expect(ok).toContainText(`Written ${node.slug}`);
  await screenshot(page, 'node-write-tag-written');

  const after = (await call('GET', `/nodes/${node.slug}`)).body.data;
  expect(after.hardware_id).toBeTruthy();
  await expect(ok).toContainText(after.hardware_id);
  expect(tag.ndefMessage()).toEqual(expectedNdefUri(`${after.url}?nfc`));
  await tag.remove();
});

test('Program tags: a presented tag is written with a success banner; an unsupported card gets the refusal', async ({ page }) => {
  const prefix = 'FLD';
  const created = (await call('POST', '/batches', { label: 'Field tags', prefix, quantity: 2, function_type: 'redirect', base_payload: { url: 'https://example.com/f' } })).body.data;
  await expect.poll(async () => (await call('GET', `/batches/${created.id}`)).body.data.status, { timeout: 20_000 }).toBe('ready');
  await page.goto(`${base}/console/program-tags#key=${key}`);
  await page.getByLabel('Batch', { exact: true }).selectOption(created.id);
  await page.getByRole('button', { name: 'Start writing' }).click();
  await expect(page.getByText(`${prefix}-001`, { exact: true })).toBeVisible();

  const tag = new VirtualTag({ model: 'NTAG213' });
  await tag.insert(sandbox!.endpoint(0));
  const ok = page.locator('[data-outcome="success"]');
  await expect(ok).toContainText(`Written ${prefix}-001`, { timeout: 30_000 });
  await expect(page.getByText(`${prefix}-002`, { exact: true })).toBeVisible();
  await screenshot(page, 'program-tags-written');
  await tag.remove();
  // The finished tag placed again (as after a restart with it still on the reader): lift it, no Reassign offered.
  await tag.insert(sandbox!.endpoint(0));
  const again = page.locator('[data-outcome="failure"]');
  await expect(again).toContainText(`Already written as ${prefix}-001 — lift it and place the tag for ${prefix}-002.`, { timeout: 30_000 });
  await expect(page.getByRole('button', { name: 'Take this tag over' })).toHaveCount(0);
  await tag.remove();

  const classic = new VirtualTag({ atr: ATR_MIFARE_CLASSIC_1K });
  await classic.insert(sandbox!.endpoint(0));
  const refused = page.locator('[data-outcome="failure"]');
  await expect(refused).toBeVisible({ timeout: 30_000 });
  await expect(refused).toContainText(/not supported|unsupported|MIFARE Classic/i);
  await screenshot(page, 'program-tags-refused');
  await classic.remove();
  await page.getByRole('button', { name: 'Stop' }).click();
});

test('Program tags: a session that mirrors and protects its tags lists each tag with its protection, as the manifest does', async ({ page }) => {
  const prefix = 'PRT';
  const created = (await call('POST', '/batches', { label: 'Protected tags', prefix, quantity: 2, function_type: 'redirect', base_payload: { url: 'https://example.com/p' } })).body.data;
  await expect.poll(async () => (await call('GET', `/batches/${created.id}`)).body.data.status, { timeout: 20_000 }).toBe('ready');
  await page.goto(`${base}/console/program-tags#key=${key}`);
  await page.getByLabel('Batch', { exact: true }).selectOption(created.id);
  await page.getByRole('checkbox', { name: /Mirror each tag’s UID and tap counter/ }).check();
  await page.getByRole('checkbox', { name: /Protect each tag with its own password/ }).check();
  await page.getByRole('button', { name: 'Start writing' }).click();
  await expect(page.getByText(`${prefix}-001`, { exact: true })).toBeVisible();
  expect((await call('GET', '/nfc/status')).body.data.session).toMatchObject({ mirror_tags: true, protect_tags: true });

  const tag = new VirtualTag({ model: 'NTAG213' });
  await tag.insert(sandbox!.endpoint(0));
  await expect(page.locator('[data-outcome="success"]')).toContainText(`Written ${prefix}-001`, { timeout: 30_000 });
  const row = page.getByRole('table', { name: 'Recently written tags' }).getByRole('row').filter({ hasText: `${prefix}-001` });
  await expect(row.getByRole('cell').nth(2)).toHaveText('NTAG21x mirror and password: tap evidence, cannot be rewritten in the field');
  await tag.remove();
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByRole('button', { name: 'Start writing' })).toBeVisible();

  const nodes = (await call('GET', `/batches/${created.id}/manifest`)).body.data.nodes as Array<{ serial: string; slug: string; hardware_id: string | null; tag_protection: string | null }>;
  expect(nodes.map((n) => [n.serial, n.tag_protection])).toEqual([
    [`${prefix}-001`, 'ntag21x_mirror_password'],
    [`${prefix}-002`, null],
  ]);
  const csv = await (await fetch(`${base}/v1/batches/${created.id}/manifest?format=csv`, { headers: { authorization: `Bearer ${key}` } })).text();
  expect(csv.split(/\r\n/)[1]).toMatch(new RegExp(`^${prefix}-001,.*,ntag21x_mirror_password$`));

  // The node's Tag verification tab lists the mirrored tag, checked at scan time, not tapped yet.
  await page.goto(`${base}/console/nodes/${nodes[0]!.slug}#key=${key}`);
  await page.getByRole('tab', { name: 'Tag verification' }).click();
  const tagRow = page.getByRole('table', { name: 'Tags checked at scan time' }).getByRole('row').filter({ hasText: nodes[0]!.hardware_id!.replaceAll(':', '') });
  await expect(tagRow.getByRole('cell')).toHaveText([nodes[0]!.hardware_id!.replaceAll(':', ''), 'NTAG21x mirror: evidence of a tap, not proof', 'No tap yet']);
});

test('Program tags, check mode: with no session a placed tag is read and shown (its node, blank, another URL)', async ({ page }) => {
  const node = (await call('POST', '/nodes', { label: 'Boiler room', function_type: 'redirect', payload: { url: 'https://example.com/boiler' } })).body.data;
  await page.goto(`${base}/console/program-tags#key=${key}`);
  const check = page.locator('[data-tag-check]');
  await expect(check).toContainText('Place a tag on the reader to see what it holds.');

  const blank = new VirtualTag({ model: 'NTAG215' });
  await blank.insert(sandbox!.endpoint(0));
  await expect(check).toHaveAttribute('data-tag-check', 'blank');
  await expect(check).toContainText('Blank — Blank NTAG215: nothing written on it yet.');
  // What protects it: an NTAG21x with no mirror, never written by this organization.
  await expect(check.locator('[data-tag-protection]')).toHaveAttribute('data-tag-protection', 'ntag21x');
  await expect(check).toContainText('NTAG21x mirror and password — No UID + counter mirror; not written by this organization, so its password state is unknown.');
  await blank.remove();
  await expect(check).toHaveAttribute('data-tag-check', 'none');

  const written = new VirtualTag();
  written.holdNdef(expectedNdefUri(`${node.url}?nfc`)); // written for the node, never bound
  await written.insert(sandbox!.endpoint(0));
  await expect(check).toHaveAttribute('data-tag-check', 'node');
  await expect(check).toContainText('Written — Boiler room (active).');
  await expect(check).toContainText(`Not bound to Boiler room yet`);
  await screenshot(page, 'program-tags-check');
  await written.remove();

  const other = new VirtualTag();
  other.holdNdef(expectedNdefUri('https://elsewhere.example/menu'));
  await other.insert(sandbox!.endpoint(0));
  await expect(check).toHaveAttribute('data-tag-check', 'other_url');
  await expect(check).toContainText('Another URL: https://elsewhere.example/menu');
  await other.remove();
  expect(blank.stats.writes + written.stats.writes + other.stats.writes).toBe(0);
});

test('NFC unavailable: Start writing and Write are disabled, with the reason and the fix in plain words (no module names)', async ({ page }) => {
  const dir = tempDataDir('waymark-e2e-nfc-off-');
  const log: string[] = [];
  // nfc-pcsc whose native module does not load (see test/nfc/broken-nfc-pcsc.ts).
  const off = await startServer({
    host: '127.0.0.1',
    port: 0,
    dataDir: dir,
    scanBase: 'https://wm.example', // a permanent scan base: only NFC stands in the way
    logger: { info: (m) => log.push(m), error: (m) => log.push(m) },
    nfc: { env: { ...process.env, WAYMARK_NFC_PCSC_MODULE: join(import.meta.dirname, '..', 'nfc', 'broken-nfc-pcsc.ts') } },
  });
  try {
    const big = { standard_per_minute: 100_000, batch_per_minute: 1000, burst_per_second: 10_000 };
    const offKey = (await off.app.services.keys.createKey(off.firstRun!.orgId, 'e2e nfc off', 'enterprise', big)).apiKey;
    const offBase = `http://127.0.0.1:${new URL(off.url).port}`;
    const h = { authorization: `Bearer ${offKey}`, 'content-type': 'application/json' };
    const batch = (await (await fetch(`${offBase}/v1/batches`, { method: 'POST', headers: h, body: JSON.stringify({ label: 'Off tags', prefix: 'OFF', quantity: 1, function_type: 'redirect', base_payload: { url: 'https://example.com' } }) })).json()).data;
    await expect.poll(async () => (await (await fetch(`${offBase}/v1/batches/${batch.id}`, { headers: h })).json()).data.status, { timeout: 20_000 }).toBe('ready');

    await page.goto(`${offBase}/console/program-tags#key=${offKey}`);
    const blocked = page.locator('[data-nfc-blocked]');
    await expect(blocked).toContainText('NFC is installed on this computer but does not start.');
    await expect(blocked).toContainText('Ask whoever installed Waymark on this computer to reinstall it with NFC support');
    await expect(page.getByRole('button', { name: 'Start writing' })).toBeDisabled();
    await expect(page.locator('main#main')).not.toContainText(/nfc-pcsc|node_modules|pcsclite|NODE_MODULE_VERSION/);
    await screenshot(page, 'program-tags-unavailable');

    const node = (await (await fetch(`${offBase}/v1/nodes`, { method: 'POST', headers: h, body: JSON.stringify({ label: 'Off node', function_type: 'redirect', payload: { url: 'https://example.com/o' } }) })).json()).data;
    await page.goto(`${offBase}/console/nodes/${node.slug}#key=${offKey}`);
    await page.getByRole('tab', { name: 'Write NFC tag' }).click();
    await expect(page.locator('[data-nfc-blocked]')).toContainText('reinstall it with NFC support');
    await expect(page.getByRole('button', { name: 'Write NFC tag' })).toBeDisabled();
    await expect(page.locator('main#main')).not.toContainText(/nfc-pcsc|node_modules|pcsclite|NODE_MODULE_VERSION/);
    // The raw error is in the server log.
    expect(log.join('\n')).toMatch(/nfc-pcsc cannot load \(.*node_modules\/@pokusew\/pcsclite/);
  } finally {
    await off.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
