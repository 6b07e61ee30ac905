import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Database } from 'better-sqlite3';
import type { Logger } from '../../server/app.ts';
import type { Clock } from '../../server/platform/clock.ts';
import { type RunningServer, startServer } from '../../server/serve.ts';
import { type FaultProxy, startFaultProxy } from '../support/faultProxy.ts';
import { type ApiResponse, apiRequest, tempDataDir, UNLIMITED } from '../support/server.ts';

/*
 * A remote and N sites as in-process servers on loopback (real SQLite files, real HTTP), each
 * site talking to the remote through its own fault proxy. Sites and the remote can be stopped and
 * restarted on their data directory; the remote keeps its port so the proxies find it again.
 * The sync workers are slowed to a crawl: tests drive rounds with POST /v1/sync/run.
 */

const quiet: Logger = { info: () => {}, error: () => {} };

/** Worker timings that leave the pace to the test (rounds run on POST /v1/sync/run). */
const HANDS_OFF = { pollMs: 3_600_000, minBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 };

export interface Instance {
  name: string;
  dataDir: string;
  running: RunningServer | null;
  /** A local key with budgets no test reaches (kept across restarts: it lives in the database). */
  key: string;
  orgId: string;
  readonly db: Database;
  readonly url: string;
  api(method: string, path: string, body?: unknown): Promise<ApiResponse>;
}

export interface Site extends Instance {
  proxy: FaultProxy;
}

export interface Cluster {
  clock: Clock;
  remote: Instance;
  sites: Site[];
  /** The key sites use at the remote. */
  remoteKey: string;
  /** Every instance, remote first. */
  all(): Instance[];
  /** Stops an instance (cleanly: app workers stopped, database closed) and starts it again on its data. */
  restart(instance: Instance): Promise<void>;
  stop(instance: Instance): Promise<void>;
  start(instance: Instance): Promise<void>;
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

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function makeInstance(name: string, dataDir: string): Instance {
  const inst: Instance = {
    name,
    dataDir,
    running: null,
    key: '',
    orgId: '',
    get db() {
      if (!inst.running) throw new Error(`${name} is not running`);
      return inst.running.db;
    },
    get url() {
      if (!inst.running) throw new Error(`${name} is not running`);
      return inst.running.url;
    },
    api: (method, path, body) => apiRequest(inst.url, method, path, body, inst.key),
  };
  return inst;
}

export async function startCluster(options: { sites: number; clock: Clock }): Promise<Cluster> {
  const { clock } = options;
  const remotePort = await freePort();
  const remote = makeInstance('remote', tempDataDir('waymark-model-remote-'));
  const launchRemote = async () => {
    remote.running = await startServer({ host: '127.0.0.1', port: remotePort, dataDir: remote.dataDir, clock, logger: quiet });
  };
  await launchRemote();
  const first = remote.running!.firstRun!;
  remote.orgId = first.orgId;
  remote.key = remote.running!.app.services.keys.createKey(first.orgId, 'Model test', 'enterprise', UNLIMITED).apiKey;
  const remoteKey = remote.running!.app.services.keys.createKey(first.orgId, 'Sites', 'enterprise', UNLIMITED).apiKey;
  const remoteUrl = `http://127.0.0.1:${remotePort}`;

  const sites: Site[] = [];
  const launchSite = async (site: Site) => {
    site.running = await startServer({
      host: '127.0.0.1',
      port: 0,
      dataDir: site.dataDir,
      clock,
      logger: quiet,
      sync: { remoteUrl: site.proxy.url, remoteKey, siteName: site.name, worker: HANDS_OFF },
    });
  };
  for (let i = 0; i < options.sites; i++) {
    const proxy = await startFaultProxy(remoteUrl);
    const site = Object.assign(makeInstance(`site${i}`, tempDataDir(`waymark-model-site${i}-`)), { proxy }) as Site;
    await launchSite(site);
    const run = site.running!;
    site.orgId = run.firstRun!.orgId;
    site.key = run.app.services.keys.createKey(site.orgId, 'Model test', 'enterprise', UNLIMITED).apiKey;
    sites.push(site);
  }

  const stop = async (inst: Instance) => {
    if (!inst.running) return;
    const r = inst.running;
    inst.running = null;
    await r.close();
  };
  const start = async (inst: Instance) => {
    if (inst.running) return;
    if (inst === remote) await launchRemote();
    else await launchSite(inst as Site);
  };
  const cluster: Cluster = {
    clock,
    remote,
    sites,
    remoteKey,
    all: () => [remote, ...sites],
    stop,
    start,
    restart: async (inst) => {
      await stop(inst);
      await start(inst);
    },
    syncRound: async (site) => {
      const res = await site.api('POST', '/sync/run');
      if (res.status !== 200) throw new Error(`POST /sync/run on ${site.name}: ${res.status} ${res.text}`);
      return res.body.data as SyncStatusBody;
    },
    close: async () => {
      for (const inst of cluster.all()) await stop(inst);
      for (const s of sites) await s.proxy.close();
      for (const inst of cluster.all()) rmSync(inst.dataDir, { recursive: true, force: true });
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

/** The synced state of an instance: table → id → row without its local columns. */
export function syncedState(db: Database): Record<string, Map<string, Record<string, unknown>>> {
  const out: Record<string, Map<string, Record<string, unknown>>> = {};
  for (const [table, local] of Object.entries(LOCAL_COLUMNS)) {
    const key = table === 'slugs' ? 'slug' : 'id';
    const rows = db.prepare(`SELECT * FROM ${table} ORDER BY ${key}`).all() as Array<Record<string, unknown>>;
    out[table] = new Map(
      rows.map((r) => {
        const kept = Object.fromEntries(Object.entries(r).filter(([c]) => !local.includes(c)));
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
export function diffStates(aName: string, a: ReturnType<typeof syncedState>, bName: string, b: ReturnType<typeof syncedState>, cap = 20): string[] {
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
export function fingerprint(db: Database): string {
  return JSON.stringify(Object.entries(syncedState(db)).map(([t, rows]) => [t, [...rows.entries()]]));
}
