import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import type { FaultProxy } from '../support/faultProxy.ts';
import { eventually, freePort } from '../support/receiver.ts';
import { readDb } from '../support/readDb.ts';
import { webhookSecretOpener } from '../support/webhookSecrets.ts';
import { apiRequest, dropDatabaseFor, repoRoot, type ServerProcess, spawnServer, storageArgs, tempDataDir, testBackend } from '../support/server.ts';

/*
 * Helpers for the sync process tests: a remote and sites as real CLI processes on loopback,
 * killed after each test; data directories removed at the end of the file.
 */

const running = new Set<ServerProcess>();
const dirs: string[] = [];
export const proxies: FaultProxy[] = [];

afterEach(async () => {
  await Promise.all([...running].map((p) => p.kill()));
  running.clear();
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  for (const d of dirs) {
    rmSync(d, { recursive: true, force: true });
    await dropDatabaseFor(d);
  }
});

export function dir(): string {
  const d = tempDataDir('waymark-sync-');
  dirs.push(d);
  return d;
}

/** The first-run key the CLI prints (just after the listening line). */
export async function firstKey(proc: ServerProcess): Promise<string> {
  return waitFor(`the first-run key in:\n${proc.output()}`, async () => /^\s+(wmk_[A-Za-z0-9]+)\s*$/m.exec(proc.output())?.[1], 5_000);
}

/**
 * A server process on `dataDir`. Sites are SQLite (the desktop app and LAN boxes); a remote runs
 * on the suites' backend (PostgreSQL when WAYMARK_TEST_BACKEND=postgres, as a central instance).
 */
export async function spawn(dataDir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, backend: 'sqlite' | 'postgres' = 'sqlite'): Promise<ServerProcess> {
  const proc = await spawnServer(dataDir, args, env, { backend });
  running.add(proc);
  return proc;
}

export async function stop(proc: ServerProcess): Promise<void> {
  await proc.stop();
  running.delete(proc);
}

export async function kill(proc: ServerProcess): Promise<void> {
  await proc.kill();
  running.delete(proc);
}

export interface Remote {
  dataDir: string;
  /** What it runs on: SQLite (its data directory's file) or PostgreSQL (the database the harness gave that directory). */
  backend: 'sqlite' | 'postgres';
  port: number;
  url: string;
  key: string;
  proc: ServerProcess;
}

/** A remote on a fixed port, so sites can find it again after it restarts. */
export async function startRemote(backend: Remote['backend'] = testBackend): Promise<Remote> {
  const dataDir = dir();
  const port = await freePort();
  const proc = await spawn(dataDir, ['--port', String(port)], {}, backend);
  return { dataDir, backend, port, url: `http://127.0.0.1:${port}`, key: await firstKey(proc), proc };
}

/**
 * A remote whose key is an enterprise key: push/pull rounds of several sites quickly exceed the
 * developer plan's 100 calls a minute (they would back off and retry, which is slow for a test).
 */
export async function startBusyRemote(backend: Remote['backend'] = testBackend): Promise<Remote> {
  const remote = await startRemote(backend);
  const orgId = (await readDb(remote.dataDir, (db) => db.value<string>('SELECT id FROM organizations')))!;
  const out = await cli(remote.dataDir, 'keys', 'create', '--org', orgId, '--name', 'Sites', '--plan', 'enterprise', '--json');
  return { ...remote, key: JSON.parse(out).api_key as string };
}

/** The CLI on an instance's storage (its SQLite file, or its PostgreSQL database); answers stdout. */
export async function cli(dataDir: string, ...args: string[]): Promise<string> {
  return execFileSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), ...args, ...(await storageArgs(dataDir))]).toString();
}

/** `org create` on an instance: another organization and its key. */
export async function createOrg(dataDir: string, name: string): Promise<{ api_key: string }> {
  return JSON.parse(await cli(dataDir, 'org', 'create', '--name', name, '--json')) as { api_key: string };
}

export async function restartRemote(remote: Remote): Promise<void> {
  remote.proc = await spawn(remote.dataDir, ['--port', String(remote.port)], {}, remote.backend);
}

export interface Site {
  dataDir: string;
  proc: ServerProcess;
  key: string;
  api: (method: string, path: string, body?: unknown) => ReturnType<typeof apiRequest>;
}

/** A polite client: waits out a 429 (a developer key has a burst budget of 20 requests a second and 100 a minute). */
export async function politely(call: () => ReturnType<typeof apiRequest>): ReturnType<typeof apiRequest> {
  for (;;) {
    const res = await call();
    if (res.status !== 429) return res;
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
  }
}

export async function startSite(remoteUrl: string, remoteKey: string, dataDir = dir(), key?: string): Promise<Site> {
  const proc = await spawn(dataDir, [], { WAYMARK_REMOTE: remoteUrl, WAYMARK_REMOTE_KEY: remoteKey });
  const siteKey = key ?? (await firstKey(proc));
  // Polite: the site key's budgets are not under test here, and polls that run longer on a loaded
  // machine spend more of them (a 429 surfaced as a failed sync test in CI).
  return { dataDir, proc, key: siteKey, api: (method, path, body) => politely(() => apiRequest(proc.url, method, path, body, siteKey)) };
}

export async function restartSite(site: Site, remoteUrl: string, remoteKey: string): Promise<Site> {
  return startSite(remoteUrl, remoteKey, site.dataDir, site.key);
}

/** Polls until `probe` returns a value other than undefined or false (a readiness wait, not a timing assertion). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  return eventually(async () => {
    const value = await probe();
    return value === false ? undefined : value;
  }, timeoutMs, what, everyMs);
}

export async function statusOf(site: Site) {
  const res = await site.api('GET', '/sync/status');
  expect(res.status).toBe(200);
  return res.body.data;
}

export async function paired(site: Site) {
  return waitFor('pairing and a full reserve', async () => {
    const s = await statusOf(site);
    return s.paired && s.reserve.blocks === 2 ? s : undefined;
  });
}

// ---- Rounds and comparisons shared by the replication suites ----

/** A redirect node's creation body. */
export const node = (label: string) => ({ label, function_type: 'redirect', payload: { url: `https://example.com/${label}` } });

export async function ok(res: Promise<{ status: number; text: string; body: any }>, status = 200) { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.body.data;
}

/** One sync round on the site (push, pull, leases); fails the test if the round failed. */
export async function sync(site: Site) {
  const s = await ok(site.api('POST', '/sync/run'));
  expect(s.last_error).toBeNull();
  return s;
}

/** Rounds until every site has pushed everything and pulled what the others pushed. */
export async function syncAll(...sites: Site[]) {
  for (let i = 0; i < 2; i++) for (const s of sites) await sync(s);
  for (const s of sites) expect((await statusOf(s)).pending_changes).toBe(0);
}

/** What must be equal everywhere: synced entities, field by field (org ids differ per instance). */
export async function snapshot(dataDir: string) {
  // Each instance seals webhook secrets under its own data key: compared opened.
  const open = webhookSecretOpener(dataDir);
  return readDb(dataDir, async (db) => ({
    nodes: await db.all<Record<string, unknown>>(
        'SELECT id, slug, label, function_type, payload_json, status, template_id, batch_id, serial, serial_number, created_at, updated_at FROM nodes ORDER BY id',
      ),
    rules: await db.all('SELECT id, node_id, rule_type, conditions_json, function_type, payload_json, priority, enabled, updated_at FROM rules ORDER BY id'),
    templates: await db.all('SELECT id, name, function_type, payload_json, locked_fields_json, updated_at FROM templates ORDER BY id'),
    batches: await db.all('SELECT id, label, prefix, quantity, serial_start FROM batches ORDER BY id'),
    webhooks: (await db.all<{ id: string; secret: string }>('SELECT id, url, events_json, secret, active FROM webhooks ORDER BY id')).map((w) => ({ ...w, secret: open(w.secret, w.id) })),
    tombstoned: await db.pluck('SELECT slug FROM slugs WHERE deleted_at IS NOT NULL ORDER BY slug'),
    slugs: await db.all('SELECT slug, node_id, minted_at FROM slugs ORDER BY slug'),
  }));
}

export async function scansOf(dataDir: string) {
  return readDb(dataDir, async (db) => ({
    total: await db.value<number>('SELECT COUNT(*) FROM scan_events'),
    distinct: await db.value<number>('SELECT COUNT(DISTINCT sync_id) FROM scan_events WHERE sync_id IS NOT NULL'),
    counts: await db.all('SELECT id, scan_count FROM nodes WHERE scan_count > 0 ORDER BY id'),
  }));
}

export async function scan(site: Site, slug: string, times: number) {
  for (let i = 0; i < times; i++) {
    const res = await fetch(`${site.proc.url}/v/${slug}`, { redirect: 'manual', headers: { 'user-agent': `Mozilla/5.0 (iPhone; test ${i})` } });
    expect([301, 302, 303, 307, 308, 200]).toContain(res.status);
  }
}

export const scanCount = (site: Site, slug: string) =>
  readDb(site.dataDir, (db) => db.value<number>('SELECT scan_count FROM nodes WHERE slug = ?', slug));

export { readDb, type Rows } from '../support/readDb.ts';
