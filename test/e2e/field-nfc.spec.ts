// One real tag write through the node page's "Write NFC tag" tab: pcscd + vpcd with a virtual
// NTAG215 from test/nfc (the same harness as the NFC suites), and a server of its own started
// in-process with the bridge pointed at that pcscd. Skips with a one-line reason without them.
import { rmSync } from 'node:fs';
import { startServer, type RunningServer } from '../../server/serve.ts';
import { tempDataDir } from '../support/server.ts';
import { nfcSkipReason, startPcscSandbox, type PcscSandbox } from '../nfc/harness.ts';
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

  const classic = new VirtualTag({ atr: ATR_MIFARE_CLASSIC_1K });
  await classic.insert(sandbox!.endpoint(0));
  const refused = page.locator('[data-outcome="failure"]');
  await expect(refused).toBeVisible({ timeout: 30_000 });
  await expect(refused).toContainText(/not supported|unsupported|MIFARE Classic/i);
  await screenshot(page, 'program-tags-refused');
  await classic.remove();
  await page.getByRole('button', { name: 'Stop' }).click();
});
