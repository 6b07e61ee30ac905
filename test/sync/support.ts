import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, expect } from 'vitest';
import type { FaultProxy } from '../support/faultProxy.ts';
import { eventually, freePort } from '../support/receiver.ts';
import { apiRequest, databaseOf, repoRoot, type ServerProcess, spawnServer, tempDataDir, testBackend } from '../support/server.ts';

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
  port: number;
  url: string;
  key: string;
  proc: ServerProcess;
}

/** A remote on a fixed port, so sites can find it again after it restarts. */
export async function startRemote(): Promise<Remote> {
  const dataDir = dir();
  const port = await freePort();
  const proc = await spawn(dataDir, ['--port', String(port)], {}, testBackend);
  return { dataDir, port, url: `http://127.0.0.1:${port}`, key: await firstKey(proc), proc };
}

/**
 * A remote whose key is an enterprise key: push/pull rounds of several sites quickly exceed the
 * developer plan's 100 calls a minute (they would back off and retry, which is slow for a test).
 */
export async function startBusyRemote(): Promise<Remote> {
  const remote = await startRemote();
  const orgId = (await readDb(remote.dataDir, (db) => db.value<string>('SELECT id FROM organizations')))!;
  const database = await databaseOf(remote.dataDir);
  const out = execFileSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'keys', 'create', '--org', orgId, '--name', 'Sites', '--plan', 'enterprise', ...(database ? ['--database', database] : ['--data', remote.dataDir]), '--json']);
  return { ...remote, key: JSON.parse(out.toString()).api_key as string };
}

export async function restartRemote(remote: Remote): Promise<void> {
  remote.proc = await spawn(remote.dataDir, ['--port', String(remote.port)], {}, testBackend);
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

/** Reads of an instance's rows, written once with `?` placeholders, on SQLite or PostgreSQL. */
export interface Rows {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** The first column of every row. */
  pluck<T = unknown>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The first column of the first row. */
  value<T = unknown>(sql: string, ...params: unknown[]): Promise<T | undefined>;
}

/**
 * The rows of the instance on `dataDir`: its SQLite file, or the PostgreSQL database the test
 * harness gave it (a remote when the suites run on PostgreSQL). Counts are numbers on both.
 */
export async function readDb<T>(dataDir: string, fn: (db: Rows) => Promise<T>): Promise<T> {
  const url = await databaseOf(dataDir);
  let all: (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;
  let close: () => Promise<void>;
  if (url) {
    const client = new pg.Client({ connectionString: url, types: { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) } as pg.CustomTypesConfig });
    await client.connect();
    all = async (sql, params) => {
      let n = 0;
      return (await client.query<Record<string, unknown>>(sql.replace(/\?/g, () => `$${++n}`), params)).rows;
    };
    close = () => client.end();
  } else {
    const db = new BetterSqlite3(join(dataDir, 'waymark.sqlite'), { readonly: true });
    all = async (sql, params) => db.prepare(sql).all(...params) as Array<Record<string, unknown>>;
    close = async () => {
      db.close();
    };
  }
  const rows: Rows = {
    all: async <R,>(sql: string, ...params: unknown[]) => (await all(sql, params)) as R[],
    get: async <R,>(sql: string, ...params: unknown[]) => (await all(sql, params))[0] as R | undefined,
    pluck: async <R,>(sql: string, ...params: unknown[]) => (await all(sql, params)).map((r) => Object.values(r)[0] as R),
    value: async <R,>(sql: string, ...params: unknown[]) => {
      const first = (await all(sql, params))[0];
      return (first === undefined ? undefined : Object.values(first)[0]) as R | undefined;
    },
  };
  try {
    return await fn(rows);
  } finally {
    await close();
  }
}
