import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../server/app.ts';
import { assertContract } from './contract.ts';
import type { WebhookSettings } from '../../server/config.ts';
import type { Clock } from '../../server/platform/clock.ts';
import { ROOT_KEY_SECRET } from '../../server/platform/instanceKeys.ts';
import { FileSecretStore, type SecretStore } from '../../server/platform/secrets.ts';
import { type HttpTimeouts, type RunningServer, startServer } from '../../server/serve.ts';
import { freshPostgresDatabase, migratedPostgresDatabase } from './stores.ts';

export const repoRoot = join(import.meta.dirname, '..', '..');

export function tempDataDir(prefix = 'waymark-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * The backend the suites run on: SQLite by default; PostgreSQL when WAYMARK_TEST_BACKEND=postgres
 * (vitest.config.ts runs the API, scans, webhooks, batches and sync suites once more that way).
 */
export const testBackend: 'sqlite' | 'postgres' = process.env.WAYMARK_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

/**
 * On PostgreSQL each data directory gets a database of its own on the test server, created at
 * first use: a test that restarts a server on the same data directory finds its data again.
 */
const databases = new Map<string, Promise<{ url: string; drop(): Promise<void> }>>();

export async function databaseFor(dataDir: string, backend: 'sqlite' | 'postgres' = testBackend): Promise<string | undefined> {
  if (backend !== 'postgres') return undefined;
  let db = databases.get(dataDir);
  if (!db) {
    db = migratedPostgresDatabase();
    databases.set(dataDir, db);
    // A server on PostgreSQL needs the operator's root key (docs/deploy.md): this instance keeps its own.
    giveRootKey(join(dataDir, 'secrets.json'));
  }
  return (await db).url;
}

/**
 * A test's own secret store (e.g. the desktop app's) on PostgreSQL, where a server needs the root
 * key: read from the data directory's secrets file, everything else from the test's store.
 */
function withRootKeyOf(store: SecretStore, dataDir: string): SecretStore {
  const root = new FileSecretStore(join(dataDir, 'secrets.json'));
  return {
    get: (name) => (name === ROOT_KEY_SECRET ? root.get(name) : store.get(name)),
    set: (name, value) => store.set(name, value),
    delete: (name) => store.delete(name),
  };
}

/** Puts a new root key in a secrets file that has none (`waymark secrets init` for a file that may exist). */
export function giveRootKey(file: string): string {
  const store = new FileSecretStore(file);
  if (store.get(ROOT_KEY_SECRET) === null) store.set(ROOT_KEY_SECRET, randomBytes(32).toString('hex'));
  return file;
}

/** The PostgreSQL database a data directory was given, if any (else it is a SQLite file). */
export async function databaseOf(dataDir: string): Promise<string | undefined> {
  return (await databases.get(dataDir))?.url;
}

/**
 * Copies a stopped instance's data to another data directory, as a backup or its restore: the
 * directory, and on PostgreSQL its database (CREATE DATABASE … TEMPLATE; whatever `toDir` had is
 * dropped first).
 */
export async function copyInstanceData(fromDir: string, toDir: string): Promise<void> {
  cpSync(fromDir, toDir, { recursive: true });
  const source = databases.get(fromDir);
  if (!source) return;
  await dropDatabaseFor(toDir);
  const copy = freshPostgresDatabase((await source).url);
  databases.set(toDir, copy);
  await copy;
}

/** The CLI's options naming an instance's storage: `--database URL` on PostgreSQL (with `--data DIR` for its secrets file), else `--data DIR`. */
export async function storageArgs(dataDir: string): Promise<string[]> {
  const url = await databaseOf(dataDir);
  return url ? ['--data', dataDir, '--database', url] : ['--data', dataDir];
}

/** Drops the PostgreSQL database of a data directory (no-op on SQLite). */
export async function dropDatabaseFor(dataDir: string): Promise<void> {
  const db = databases.get(dataDir);
  if (!db) return;
  databases.delete(dataDir);
  await (await db).drop();
}

const quietLogger: Logger = { info: () => {}, error: (m, err) => console.error(m, err) };

export interface TestServer {
  url: string;
  apiKey: string;
  orgId: string;
  dataDir: string;
  running: RunningServer;
  /** fetch against the API with the default key (or `key`, or none with `key: null`). */
  api(method: string, path: string, body?: unknown, key?: string | null): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/** A real server on 127.0.0.1 (random port) over a real SQLite file in a temp dir. */
export interface TestServerOptions {
  clock?: Clock;
  dataDir?: string;
  scanBase?: string;
  trustProxy?: boolean;
  /**
   * `unlimited` makes the default key an enterprise key with budgets no functional test reaches
   * (the first-run developer key allows 20 requests a second). Rate-limit tests leave it unset.
   */
  limits?: 'developer' | 'unlimited';
  webhooks?: Partial<WebhookSettings>;
  /** Replaces the default secret store (`<dataDir>/secrets.json`). */
  secrets?: SecretStore;
  /** A console build to serve at /console/ (default: out/renderer). */
  consoleDir?: string;
  httpTimeouts?: Partial<HttpTimeouts>;
}

export const UNLIMITED = { standard_per_minute: 1_000_000, batch_per_minute: 1_000_000, burst_per_second: 1_000_000 };

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const database = await databaseFor(dataDir);
  const running = await startServer({
    host: '127.0.0.1',
    port: 0,
    dataDir,
    database,
    scanBase: options.scanBase,
    trustProxy: options.trustProxy,
    webhooks: options.webhooks,
    logger: quietLogger,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.secrets ? { secrets: database ? withRootKeyOf(options.secrets, dataDir) : options.secrets } : {}),
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
    // The server runs in the test's own process: a test that holds the event loop for seconds
    // (a synchronous pdftoppm, a bulk insert) lets the server's idle keep-alive timeout and the
    // client's next request on that connection cross (ECONNRESET), which is not under test. A
    // long idle bound keeps the client the one that closes idle connections; timeouts.test.ts
    // checks the default bound itself.
    httpTimeouts: { keepAliveMs: 60_000, ...options.httpTimeouts },
  });
  if (!running.firstRun) throw new Error('expected a fresh data directory');
  const apiKey =
    options.limits === 'unlimited'
      ? // An instance-admin key, as the first-run key it stands in for.
        (await running.app.services.keys.createKey(running.firstRun.orgId, 'Test (unlimited)', 'enterprise', UNLIMITED, undefined, { admin: true })).apiKey
      : running.firstRun.apiKey;
  return {
    url: running.url,
    apiKey,
    orgId: running.firstRun.orgId,
    dataDir,
    running,
    api: (method, path, body, key) => apiRequest(running.url, method, path, body, key === undefined ? apiKey : key),
    close: async () => {
      await running.close();
      if (!options.dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
        await dropDatabaseFor(dataDir);
      }
    },
  };
}

export async function apiRequest(base: string, method: string, path: string, body?: unknown, key?: string | null): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  let payload: string | undefined;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const fullPath = path.startsWith('/v') || path.startsWith('/h') ? path : `/v1${path}`;
  const res = await fetch(`${base}${fullPath}`, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
    redirect: 'manual',
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (CSV, HTML, PDF …): callers read `text`
  }
  // Every API response a test sees is held against the document (test/support/contract.ts).
  await assertContract(base, { method, path: fullPath, body: sentJson(body) }, { status: res.status, headers: res.headers, text });
  return { status: res.status, headers: res.headers, body: parsed, text };
}

function sentJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** SIGKILL, no chance to clean up. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The real CLI in a child process (for crash tests: SIGKILL and restart on the same data), on the
 * suite's backend unless told otherwise: `database` puts it on that PostgreSQL database, `backend`
 * picks the backend (sync sites are SQLite whatever their remote's).
 */
export async function spawnServer(
  dataDir: string,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
  options: { database?: string; startTimeoutMs?: number; backend?: 'sqlite' | 'postgres' } = {},
): Promise<ServerProcess> {
  const database = options.database ?? (await databaseFor(dataDir, options.backend ?? testBackend));
  const args = ['serve', '--port', '0', '--data', dataDir, ...(database ? ['--database', database] : []), ...extraArgs];
  const child = spawn(process.execPath, [join(repoRoot, 'server', 'cli.ts'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    // A readiness wait, not a timing assertion: a loaded 2-core machine can take many seconds.
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), options.startTimeoutMs ?? 60_000);
    const onData = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    child,
    output: () => out,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
