import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, expect } from 'vitest';
import type { FaultProxy } from '../support/faultProxy.ts';
import { eventually, freePort } from '../support/receiver.ts';
import { apiRequest, repoRoot, type ServerProcess, spawnServer, tempDataDir } from '../support/server.ts';

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
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
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

export async function spawn(dataDir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const proc = await spawnServer(dataDir, args, env);
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
  port: number;
  url: string;
  key: string;
  proc: ServerProcess;
}

/** A remote on a fixed port, so sites can find it again after it restarts. */
export async function startRemote(): Promise<Remote> {
  const dataDir = dir();
  const port = await freePort();
  const proc = await spawn(dataDir, ['--port', String(port)]);
  return { dataDir, port, url: `http://127.0.0.1:${port}`, key: await firstKey(proc), proc };
}

/**
 * A remote whose key is an enterprise key: push/pull rounds of several sites quickly exceed the
 * developer plan's 100 calls a minute (they would back off and retry, which is slow for a test).
 */
export async function startBusyRemote(): Promise<Remote> {
  const remote = await startRemote();
  const orgId = readDb(remote.dataDir, (db) => db.prepare('SELECT id FROM organizations').pluck().get() as string);
  const out = execFileSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'keys', 'create', '--org', orgId, '--name', 'Sites', '--plan', 'enterprise', '--data', remote.dataDir, '--json']);
  return { ...remote, key: JSON.parse(out.toString()).api_key as string };
}

export async function restartRemote(remote: Remote): Promise<void> {
  remote.proc = await spawn(remote.dataDir, ['--port', String(remote.port)]);
}

export interface Site {
  dataDir: string;
  proc: ServerProcess;
  key: string;
  api: (method: string, path: string, body?: unknown) => ReturnType<typeof apiRequest>;
}

/** A polite client: waits out a 429 (the site key has a burst budget of 20 requests a second). */
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
  return { dataDir, proc, key: siteKey, api: (method, path, body) => apiRequest(proc.url, method, path, body, siteKey) };
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

export function readDb<T>(dataDir: string, fn: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(join(dataDir, 'waymark.sqlite'), { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

