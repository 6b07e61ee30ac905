import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { expect, openConsole, requireChromium, screenshot, test } from './support.ts';

requireChromium();

const root = join(import.meta.dirname, '..', '..');

interface Proc {
  url: string;
  key: string;
  dataDir: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A `waymark serve` of its own on a fresh data folder (this spec pairs it, which the shared server must not be). */
async function serve(): Promise<Proc> {
  const dataDir = mkdtempSync(join(tmpdir(), 'waymark-e2e-sync-'));
  const child = spawn(process.execPath, [join(root, 'server', 'cli.ts'), 'serve', '--port', '0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WAYMARK_'))),
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 20_000);
    child.stdout!.on('data', () => {
      if (/Console: \S+#key=wmk_\w+/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: /listening on (http:\/\/\S+)/.exec(out)![1]!,
    key: /#key=(wmk_\w+)/.exec(out)![1]!,
    dataDir,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const started: Proc[] = [];
test.afterAll(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
});

test('a standalone instance shows "Standalone" in the sidebar, linking to the pairing form', async ({ page }) => {
  await openConsole(page, '/nodes');
  const indicator = page.getByTestId('sync-indicator');
  await expect(indicator).toHaveText('Standalone');
  await expect(indicator).toHaveClass(/sync-grey/);
  await indicator.click();
  await expect(page).toHaveURL(/\/console\/sync$/);
  await expect(page.getByRole('heading', { name: 'Sync', level: 1 })).toBeVisible();
  await expect(page.getByRole('form', { name: 'Pair with a remote' })).toBeVisible();
});

test('pairs from the Sync screen, shows the remote, reserve and conflicts, and goes offline when the remote stops', async ({ page }) => {
  const remote = await serve();
  started.push(remote);
  const site = await serve();
  started.push(site);

  await page.goto(`${site.url}/console/sync#key=${site.key}`);
  const form = page.getByRole('form', { name: 'Pair with a remote' });
  await expect(form).toBeVisible();
  await screenshot(page, 'sync-pair');

  // Checked in the browser first, then by the remote: a wrong key lands on its field.
  await form.getByRole('button', { name: 'Pair' }).click();
  await expect(form.getByText('Remote URL must be an http(s) origin')).toBeVisible();
  await form.getByLabel('Remote URL').fill(remote.url);
  await form.getByLabel('Remote API key').fill('wmk_wrongKey');
  await form.getByRole('button', { name: 'Pair' }).click();
  await expect(form.getByText('The remote refused this key (401)')).toBeVisible();
  await expect(page.getByTestId('sync-indicator')).toHaveText('Standalone');

  await form.getByLabel('Remote API key').fill(remote.key);
  await form.getByRole('button', { name: 'Pair' }).click();
  const facts = page.getByRole('definition');
  await expect(page.getByRole('term').filter({ hasText: 'Organization' })).toBeVisible();
  await expect(facts.filter({ hasText: 'Default organization' })).toBeVisible();
  await expect(page.getByText('Online', { exact: true }).first()).toBeVisible();
  await expect(page.getByTestId('sync-reserve')).toContainText('131,072 slugs left');
  await expect(page.getByTestId('sync-reserve')).toContainText('2 of 2 blocks');
  await expect(page.getByTestId('sync-pending')).toHaveText('0');
  const indicator = page.getByTestId('sync-indicator');
  await expect(indicator).toHaveText('Online');
  await expect(indicator).toHaveClass(/sync-green/);
  await expect(page.getByText('No conflicts')).toBeVisible();

  // A conflict recorded by the site (as pairing records a block conflict) shows up at the next poll.
  const db = new BetterSqlite3(join(site.dataDir, 'waymark.sqlite'));
  try {
    db.prepare('INSERT INTO sync_conflicts (kind, detail_json, detected_at) VALUES (?, ?, ?)').run(
      'block_conflict',
      JSON.stringify({ block: 4242, reason: 'held_by_other_site', slugs_minted: 3, first_slugs: ['ABCD0001', 'ABCD0002', 'ABCD0003'] }),
      new Date().toISOString(),
    );
  } finally {
    db.close();
  }
  const conflicts = page.getByRole('list', { name: 'Conflicts' });
  await expect(conflicts.getByRole('listitem')).toHaveCount(1);
  await expect(conflicts).toContainText('Block conflict');
  await expect(conflicts).toContainText('ABCD0001, ABCD0002, ABCD0003');
  await expect(indicator).toHaveText('1 conflict');
  await expect(indicator).toHaveClass(/sync-amber/);
  await screenshot(page, 'sync');

  // Mark resolved: it leaves the status (and the list); GET /sync/conflicts keeps it with resolved_at.
  await conflicts.getByRole('button', { name: 'Mark resolved' }).click();
  await expect(page.getByText('No conflicts')).toBeVisible();
  await expect(indicator).toHaveText('Online');
  const all = (await (await fetch(`${site.url}/v1/sync/conflicts`, { headers: { authorization: `Bearer ${site.key}` } })).json()) as { data: Array<{ kind: string; resolved_at: string | null }> };
  expect(all.data).toEqual([expect.objectContaining({ kind: 'block_conflict', resolved_at: expect.any(String) })]);

  // The remote goes away: "Sync now" finds it unreachable.
  await remote.stop();
  await page.getByRole('button', { name: 'Sync now' }).click();
  await expect(page.getByText('Offline', { exact: true }).first()).toBeVisible();
  await expect(indicator).toContainText('Offline');
  await expect(indicator).toHaveClass(/sync-grey/);
  await expect(page.getByText(/^Remote unreachable/).first()).toBeVisible();
});

test('a batch a paired site numbered offline warns before its labels are printed', async ({ page }) => {
  const remote = await serve();
  started.push(remote);
  const site = await serve();
  started.push(site);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${site.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${site.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as { data: any } }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  expect((await call('POST', '/sync/pair', { remote: remote.url, remote_key: remote.key })).status).toBe(200);
  const batch = async (label: string) => {
    const made = await call('POST', '/batches', { label, prefix: 'TENT', quantity: 2, function_type: 'redirect', base_payload: { url: 'https://example.com/tent' } });
    expect(made.status).toBe(201);
    await expect.poll(async () => (await call('GET', `/batches/${made.body.data.id}`)).body.data.status, { timeout: 30_000 }).toBe('ready');
    return made.body.data as { id: string; serials_provisional: boolean };
  };
  // Online: the remote numbers the serials.
  const online = await batch('Numbered by the remote');
  expect(online.serials_provisional).toBe(false);
  // The remote goes away: the site numbers the next batch itself, provisionally.
  await remote.stop();
  const offline = await batch('Numbered offline');
  expect(offline.serials_provisional).toBe(true);

  await page.goto(`${site.url}/console/print?batch=${offline.id}#key=${site.key}`);
  const warning = page.getByTestId('provisional-serials');
  await expect(warning).toContainText('Provisional serials');
  await expect(warning).toContainText('numbered the TENT serials itself');
  // On the screen that prints, next to what prints.
  await expect(page.getByRole('button', { name: 'Download PDF' })).toBeVisible();
  await screenshot(page, 'print-provisional-serials');

  // The batch's own page says it too; a batch the remote numbered says nothing.
  await page.goto(`${site.url}/console/batches/${offline.id}#key=${site.key}`);
  await expect(page.getByTestId('provisional-serials')).toBeVisible();
  await page.goto(`${site.url}/console/print?batch=${online.id}#key=${site.key}`);
  await expect(page.getByRole('combobox', { name: 'Batch' })).toHaveValue(online.id);
  await expect(page.getByTestId('provisional-serials')).toHaveCount(0);
});
