import { rmSync } from 'node:fs';
import type { Logger } from '../../server/app.ts';
import { openStore } from '../../server/db/openStore.ts';
import { KeysRepo } from '../../server/features/keys/repo.ts';
import { KeyService } from '../../server/features/keys/service.ts';
import { type Clock, type ManualClock, systemClock } from '../../server/platform/clock.ts';
import { type RunningServer, startServer } from '../../server/serve.ts';
import { type FaultProxy, startFaultProxy } from '../support/faultProxy.ts';
import { freePort } from '../support/receiver.ts';
import { webhookSecretOpener } from '../support/webhookSecrets.ts';
import { openReader, type Reader, type Rows } from '../support/readDb.ts';
import { type ApiResponse, apiRequest, databaseFor, dropDatabaseFor, type ServerProcess, spawnServer, tempDataDir, testBackend, UNLIMITED } from '../support/server.ts';

/*
 * A remote and N sites as in-process servers on loopback (real SQLite files, real HTTP), each
 * site talking to the remote through its own fault proxy. The remote runs on the suites' backend:
 * on PostgreSQL (WAYMARK_TEST_BACKEND=postgres) it is a central instance on a database of its
 * own; sites are SQLite (the desktop app and LAN boxes). Sites and the remote can be stopped and
 * restarted on their data directory; the remote keeps its port so the proxies find it again.
 * In-process, the sync workers are slowed to a crawl and tests drive rounds with
 * POST /v1/sync/run. With `processes`, every instance is the real CLI (`serve --remote`), a
 * restart is a SIGKILL, and the workers also run on their own schedule.
 */

const quiet: Logger = { info: () => {}, error: () => {} };

/** Worker timings that leave the pace to the test (rounds run on POST /v1/sync/run). */
const HANDS_OFF = { pollMs: 3_600_000, minBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 };

export interface Instance {
  name: string;
  dataDir: string;
  /** A local key with budgets no test reaches (kept across restarts: it lives in the database). */
  key: string;
  orgId: string;
  /** What its data is on. */
  backend: 'sqlite' | 'postgres';
  /** Reads of its rows from outside the server (its SQLite file or its PostgreSQL database), the same on both. */
  read<T>(fn: (db: Rows) => Promise<T>): Promise<T>;
  readonly url: string;
  readonly up: boolean;
  api(method: string, path: string, body?: unknown): Promise<ApiResponse>;
}

export interface Site extends Instance {
  proxy: FaultProxy;
}

export interface Cluster {
  /** Real server processes (CLI, system clock) rather than in-process servers (manual clock). */
  processes: boolean;
  remote: Instance;
  sites: Site[];
  /** The key sites use at the remote. */
  remoteKey: string;
  /** Every instance, remote first. */
  all(): Instance[];
  /**
   * Stops an instance and starts it again on its data: in-process, cleanly (workers stopped,
   * database closed); a process gets SIGKILL.
   */
  restart(instance: Instance): Promise<void>;
  /** Moves time on: the manual clock in-process; processes run on the system clock, so only a short real pause. */
  tick(ms: number): Promise<void>;
  /** One sync round on a site (push, pull, leases); answers its status. */
  syncRound(site: Site): Promise<SyncStatusBody>;
  close(): Promise<void>;
}

export interface SyncStatusBody {
  online: boolean | null;
  paired: boolean;
  last_error: string | null;
  pending_changes: number;
  conflicts: Array<{ id: number; kind: string; detail: Record<string, unknown> }>;
  [k: string]: unknown;
}

/** How an instance runs: in this process or as a child process. */
interface Host {
  readonly url: string;
  readonly up: boolean;
  start(): Promise<void>;
  /** Clean stop in-process, SIGKILL for a process. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

interface Launch {
  dataDir: string;
  port: number;
  /** Site: the proxy URL and key of the remote. */
  remote?: { url: string; key: string };
  name: string;
  backend: 'sqlite' | 'postgres';
}

function inProcess(l: Launch, clock: Clock): Host & { running: RunningServer | null } {
  const host = {
    running: null as RunningServer | null,
    get url() {
      if (!host.running) throw new Error(`${l.name} is not running`);
      return host.running.url;
    },
    get up() {
      return host.running !== null;
    },
    start: async () => {
      host.running = await startServer({
        host: '127.0.0.1',
        port: l.port,
        dataDir: l.dataDir,
        database: await databaseFor(l.dataDir, l.backend),
        clock,
        logger: quiet,
        ...(l.remote ? { sync: { remoteUrl: l.remote.url, remoteKey: l.remote.key, siteName: l.name, worker: HANDS_OFF } } : {}),
      });
    },
    stop: async () => {
      const r = host.running;
      host.running = null;
      await r?.close();
    },
    crash: async () => {
      await host.stop();
      // The test's fetch keeps connections alive. The stop closed them at the server, but the
      // client side sees the end of each only in a later event-loop turn; a start that takes none
      // (listen answers on nextTick) lets the next request go out on a dead pooled socket ("fetch
      // failed: other side closed"). Two turns: the poll phase after the close reads the ends.
      for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return host;
}

function asProcess(l: Launch): Host {
  let proc: ServerProcess | null = null;
  return {
    get url() {
      if (!proc) throw new Error(`${l.name} is not running`);
      return proc.url;
    },
    get up() {
      return proc !== null;
    },
    start: async () => {
      proc = await spawnServer(
        l.dataDir,
        ['--no-nfc', ...(l.port ? ['--port', String(l.port)] : [])],
        l.remote ? { WAYMARK_REMOTE: l.remote.url, WAYMARK_REMOTE_KEY: l.remote.key } : {},
        { backend: l.backend },
      );
    },
    crash: async () => {
      const p = proc;
      proc = null;
      await p?.kill();
    },
    stop: async () => {
      const p = proc;
      proc = null;
      await p?.stop();
    },
  };
}

function makeInstance(name: string, dataDir: string, backend: Instance['backend'], host: Host): Instance & { close(): Promise<void> } {
  // The test's own connection to the instance's data (in WAL, reads of a SQLite file never block
  // the server), opened at the first read and kept across restarts.
  let reader: Promise<Reader> | null = null;
  const inst: Instance & { close(): Promise<void> } = {
    name,
    dataDir,
    backend,
    key: '',
    orgId: '',
    read: async (fn) => {
      reader ??= openReader(dataDir);
      return fn((await reader).rows);
    },
    close: async () => {
      const r = reader;
      reader = null;
      await (await r)?.close();
    },
    get url() {
      return host.url;
    },
    get up() {
      return host.up;
    },
    api: (method, path, body) => apiRequest(inst.url, method, path, body, inst.key),
  };
  return inst;
}

/** An organization and an unlimited key in a fresh data directory (before any server runs on it). */
async function prepareData(dir: string, backend: Instance['backend']): Promise<{ orgId: string; key: string }> {
  return withKeys(dir, backend, async (keys) => {
    const { org } = await keys.createOrgWithKey('Default organization', 'First key');
    return { orgId: org.id, key: (await keys.createKey(org.id, 'Model test', 'enterprise', UNLIMITED)).apiKey };
  });
}

/** The key service on a data directory no server runs on yet. */
async function withKeys<T>(dir: string, backend: Instance['backend'], run: (keys: KeyService) => Promise<T>): Promise<T> {
  const opened = await openStore({ dataDir: dir, database: await databaseFor(dir, backend) });
  try {
    return await run(new KeyService(opened.store, new KeysRepo(), systemClock));
  } finally {
    await opened.close();
  }
}

export async function startCluster(options: { sites: number; clock: ManualClock; processes?: boolean; remoteBackend?: Instance['backend'] }): Promise<Cluster> {
  const { clock } = options;
  const processes = options.processes ?? false;
  const remoteBackend = options.remoteBackend ?? testBackend;
  const hosts = new Map<Instance, Host>();
  const readers: Array<() => Promise<void>> = [];
  const make = (l: Launch) => (processes ? asProcess(l) : inProcess(l, clock));

  const remotePort = await freePort();
  const remoteDir = tempDataDir('waymark-model-remote-');
  const remoteData = await prepareData(remoteDir, remoteBackend);
  const remoteKey = await withKeys(remoteDir, remoteBackend, async (keys) => (await keys.createKey(remoteData.orgId, 'Sites', 'enterprise', UNLIMITED)).apiKey);
  const siteData: Array<{ dir: string; orgId: string; key: string }> = [];
  for (let i = 0; i < options.sites; i++) {
    const dir = tempDataDir(`waymark-model-site${i}-`);
    siteData.push({ dir, ...(await prepareData(dir, 'sqlite')) });
  }
  // The keys above were written (and stamped with HLCs) on the system clock: start the manual
  // clock after them, so that HLC order is the order of the test's steps.
  clock.set(Date.now() + 1);

  const remoteHost = make({ dataDir: remoteDir, port: remotePort, name: 'remote', backend: remoteBackend });
  const remote = makeInstance('remote', remoteDir, remoteBackend, remoteHost);
  readers.push(remote.close);
  Object.assign(remote, { key: remoteData.key, orgId: remoteData.orgId });
  hosts.set(remote, remoteHost);
  await remoteHost.start();
  const remoteUrl = `http://127.0.0.1:${remotePort}`;

  const sites: Site[] = [];
  for (const [i, data] of siteData.entries()) {
    const proxy = await startFaultProxy(remoteUrl);
    const host = make({ dataDir: data.dir, port: 0, name: `site${i}`, remote: { url: proxy.url, key: remoteKey }, backend: 'sqlite' });
    const instance = makeInstance(`site${i}`, data.dir, 'sqlite', host);
    readers.push(instance.close);
    const site = Object.assign(instance, { proxy, key: data.key, orgId: data.orgId }) as Site;
    hosts.set(site, host);
    await host.start();
    sites.push(site);
  }

  const cluster: Cluster = {
    processes,
    remote,
    sites,
    remoteKey,
    all: () => [remote, ...sites],
    restart: async (inst) => {
      const host = hosts.get(inst)!;
      await host.crash();
      await host.start();
    },
    tick: async (ms) => {
      if (processes) await new Promise((r) => setTimeout(r, Math.min(ms, 2)));
      else clock.advance(ms);
    },
    syncRound: async (site) => {
      const res = await site.api('POST', '/sync/run');
      if (res.status !== 200) throw new Error(`POST /sync/run on ${site.name}: ${res.status} ${res.text}`);
      return res.body.data as SyncStatusBody;
    },
    close: async () => {
      for (const close of readers) await close().catch(() => {});
      for (const h of hosts.values()) await h.stop().catch(() => {});
      for (const s of sites) await s.proxy.close();
      for (const inst of cluster.all()) {
        rmSync(inst.dataDir, { recursive: true, force: true });
        await dropDatabaseFor(inst.dataDir);
      }
    },
  };
  // Pair every site before the test starts (the first round registers and leases).
  for (const s of sites) {
    const st = await cluster.syncRound(s);
    if (!st.paired) throw new Error(`${s.name} did not pair: ${st.last_error}`);
  }
  return cluster;
}

/** Columns that are local by design (docs/sync.md "Not synced as fields"), left out of comparisons. */
export const LOCAL_COLUMNS: Record<string, string[]> = {
  nodes: ['org_id', 'scan_count'],
  slugs: ['org_id'],
  rules: [],
  templates: ['org_id'],
  webhooks: ['org_id', 'start_seq', 'failing_since', 'disabled_at', 'disabled_reason'],
};

/**
 * Columns compared by a property rather than by value (none left: a slug's deleted_at travels with
 * the node's delete since migration 058, minted_at since 056; both are compared as they are).
 */
const NORMALIZE: Record<string, Record<string, (v: unknown) => unknown>> = {};

/**
 * PostgreSQL's stand-in for SQLite's implicit rowid (postgres/001_schema.sql): storage, not data,
 * and numbered per database.
 */
const STORAGE_COLUMNS = ['rowid'];

/** Webhook columns each instance keeps sealed under its own key (webhooks/repo.ts). */
const SEALED_COLUMNS = ['secret', 'previous_secret'];

/** The synced state of an instance: table → id → row without its local columns. */
export async function syncedState(inst: Instance): Promise<Record<string, Map<string, Record<string, unknown>>>> {
  const out: Record<string, Map<string, Record<string, unknown>>> = {};
  for (const [table, local] of Object.entries(LOCAL_COLUMNS)) {
    const key = table === 'slugs' ? 'slug' : 'id';
    // Every column, so a column added later is compared too (minus local and storage ones).
    const rows = await inst.read((db) => db.all(`SELECT * FROM ${table} ORDER BY ${key}`));
    // Each instance seals webhook secrets under its own data key: compared opened.
    const open = webhookSecretOpener(inst.dataDir);
    out[table] = new Map(
      rows.map((r) => {
        const kept = Object.fromEntries(
          Object.entries(r)
            .filter(([c]) => !local.includes(c) && !STORAGE_COLUMNS.includes(c))
            .map(([c, v]) => [c, NORMALIZE[table]?.[c] ? NORMALIZE[table][c](v) : v])
            .map(([c, v]) => [c, table === 'webhooks' && SEALED_COLUMNS.includes(c as string) ? open(v, String(r.id)) : v]),
        );
        return [String(r[key]), kept];
      }),
    );
  }
  return out;
}

/**
 * Differences between two instances' synced state, entity by entity and field by field, as
 * readable lines (empty when equal). Capped so one systematic difference does not flood the output.
 */
type SyncedState = Awaited<ReturnType<typeof syncedState>>;

export function diffStates(aName: string, a: SyncedState, bName: string, b: SyncedState, cap = 20): string[] {
  const out: string[] = [];
  for (const table of Object.keys(a)) {
    const [ra, rb] = [a[table]!, b[table]!];
    for (const id of new Set([...ra.keys(), ...rb.keys()])) {
      const [x, y] = [ra.get(id), rb.get(id)];
      if (!x || !y) {
        out.push(`${table} ${id}: only on ${x ? aName : bName}`);
        continue;
      }
      for (const col of Object.keys(x)) {
        if (JSON.stringify(x[col]) !== JSON.stringify(y[col])) {
          out.push(`${table} ${id}.${col}: ${aName}=${JSON.stringify(x[col])} ${bName}=${JSON.stringify(y[col])}`);
        }
      }
    }
  }
  return out.length > cap ? [...out.slice(0, cap), `… ${out.length - cap} more`] : out;
}

/** A fingerprint of everything a sync round could change on an instance (to detect quiet). */
export async function fingerprint(inst: Instance): Promise<string> {
  return JSON.stringify(Object.entries(await syncedState(inst)).map(([t, rows]) => [t, [...rows.entries()]]));
}
