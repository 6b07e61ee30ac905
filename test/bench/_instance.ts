/**
 * Instances for the issue-19 benchmarks (`org-scale`, `batch-ready`, `fold-rate`): an empty
 * instance on SQLite (a data directory) or on PostgreSQL (a fresh database on
 * WAYMARK_TEST_DATABASE), an organization and an unlimited API key made by the real CLI, data
 * seeded with bulk SQL (set-based INSERT … SELECT, so a million rows take seconds, not hours of
 * HTTP), and the real `waymark serve` in a child process on loopback for the measurements.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore, type OpenedStore } from '../../server/db/openStore.ts';
import type { Executor } from '../../server/db/store.ts';
import { freshPostgresDatabase, postgresMissing } from '../support/stores.ts';
import { giveRootKey, repoRoot, type ServerProcess, spawnServer, tempDataDir, UNLIMITED } from '../support/server.ts';

export type Backend = 'sqlite' | 'postgres';

/**
 * The backends to measure: SQLite always, PostgreSQL when WAYMARK_TEST_DATABASE names a server;
 * BENCH_BACKENDS=postgres (or sqlite) measures one only (a rerun of one backend's figures on a
 * shared machine).
 */
export function backends(): Backend[] {
  if (postgresMissing) console.log(`PostgreSQL rows skipped: ${postgresMissing}`);
  const available: Backend[] = postgresMissing ? ['sqlite'] : ['sqlite', 'postgres'];
  const only = process.env.BENCH_BACKENDS?.split(',');
  return only ? available.filter((b) => only.includes(b)) : available;
}

export interface Instance {
  backend: Backend;
  dataDir: string;
  database: string | undefined;
  opened: OpenedStore;
  /** Makes an organization and an API key for it with the CLI (limits lifted: the benchmark times the work, not the limiter). */
  organization(name: string): Promise<{ orgId: string; key: string }>;
  serve(extraArgs?: string[]): Promise<ServerProcess>;
  close(): Promise<void>;
}

function cli(args: string[]): string {
  const r = spawnSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`waymark ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

export async function openInstance(backend: Backend): Promise<Instance> {
  const dataDir = tempDataDir(`waymark-bench-${backend}-`);
  const pg = backend === 'postgres' ? await freshPostgresDatabase() : null;
  // A server on PostgreSQL refuses to start without the operator's root key (docs/deploy.md).
  if (pg) giveRootKey(join(dataDir, 'secrets.json'));
  const where = ['--data', dataDir, ...(pg ? ['--database', pg.url] : [])];
  const opened = await openStore({ dataDir, database: pg?.url, poolSize: 2 });
  const servers = new Set<ServerProcess>();
  return {
    backend,
    dataDir,
    database: pg?.url,
    opened,
    organization: async (name) => {
      const org = JSON.parse(cli(['org', 'create', '--name', name, ...where, '--json'])) as { org: { id: string } };
      const key = JSON.parse(cli(['keys', 'create', '--org', org.org.id, '--name', 'bench', '--plan', 'enterprise', ...where, '--json'])) as { key: { id: string }; api_key: string };
      await opened.store.db.updateTable('api_keys').set({ limits_json: JSON.stringify(UNLIMITED) }).where('id', '=', key.key.id).execute();
      return { orgId: org.org.id, key: key.api_key };
    },
    serve: async (extraArgs = []) => {
      const server = await spawnServer(dataDir, ['--no-nfc', ...extraArgs], {}, { backend, ...(pg ? { database: pg.url } : {}), startTimeoutMs: 300_000 });
      servers.add(server);
      const stop = server.stop;
      server.stop = async () => {
        servers.delete(server);
        await stop();
      };
      return server;
    },
    close: async () => {
      for (const s of servers) await s.stop();
      await opened.close();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `seed` with the sync change capture off, as a bulk load would: on PostgreSQL
 * session_replication_role = replica (triggers off for this transaction), on SQLite the capture
 * triggers dropped and re-created from their own text. The rows are the benchmark's data, not
 * edits a paired site should see.
 */
export async function bulk(instance: Instance, seed: (tx: Executor) => Promise<void>): Promise<void> {
  const { store, sqlite } = instance.opened;
  if (instance.backend === 'postgres') {
    await store.transaction(async (tx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(tx);
      await seed(tx);
    });
    // A table in steady use is vacuumed (autovacuum): index-only scans need its visibility map.
    await sql`VACUUM ANALYZE`.execute(store.db);
    return;
  }
  const triggers = sqlite!.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'sync_%'").all() as Array<{ name: string; sql: string }>;
  for (const t of triggers) sqlite!.exec(`DROP TRIGGER ${t.name}`);
  try {
    await store.transaction(seed);
  } finally {
    for (const t of triggers) sqlite!.exec(t.sql);
  }
  sqlite!.exec('ANALYZE');
}

/** `count` rows numbered 0 … count-1, as a FROM source on either dialect. */
export function series(backend: Backend, count: number) {
  return backend === 'postgres'
    ? sql`(SELECT i::bigint AS i FROM generate_series(0, ${sql.lit(count - 1)}) AS g(i))`
    : sql`(WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < ${sql.lit(count - 1)}) SELECT i FROM g)`;
}

/** A UUID-shaped id for row `i` of a kind (0-9), as SQL. */
export function uuidOf(backend: Backend, kind: number, i: ReturnType<typeof sql>) {
  const prefix = `00000000-0000-4000-800${kind}-`;
  return backend === 'postgres' ? sql`${prefix} || lpad(${i}::text, 12, '0')` : sql`printf(${`${prefix}%012d`}, ${i})`;
}

/** An ISO timestamp `ms` milliseconds after the epoch, as SQL (UTC, millisecond precision). */
export function isoOf(backend: Backend, ms: ReturnType<typeof sql>) {
  return backend === 'postgres'
    ? sql`to_char(to_timestamp((${ms})::double precision / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : sql`strftime('%Y-%m-%dT%H:%M:%fZ', (${ms}) / 1000.0, 'unixepoch')`;
}

/**
 * Seeds `count` redirect nodes into an organization (their slugs as well), created one
 * millisecond apart from `createdFrom`. Node i has id uuidOf(kind, i) and slug `${prefix}` + i
 * in 7 digits (digits and one Crockford letter: a valid slug).
 */
export async function seedNodes(instance: Instance, tx: Executor, orgId: string, count: number, options: { kind: number; prefix: string; createdFrom: number }): Promise<void> {
  const b = instance.backend;
  const i = sql`g.i`;
  const slug = b === 'postgres' ? sql`${options.prefix} || lpad(g.i::text, 7, '0')` : sql`${options.prefix} || printf('%07d', g.i)`;
  const at = isoOf(b, sql`${sql.lit(options.createdFrom)} + g.i`);
  await sql`INSERT INTO slugs (slug, org_id, node_id, minted_at) SELECT ${slug}, ${orgId}, ${uuidOf(b, options.kind, i)}, ${at} FROM ${series(b, count)} AS g`.execute(tx);
  await sql`INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, created_at, updated_at)
    SELECT ${uuidOf(b, options.kind, i)}, ${orgId}, ${slug}, 'Node ' || g.i, 'redirect', '{"url":"https://example.com/landing"}', 'active', ${at}, ${at}
    FROM ${series(b, count)} AS g`.execute(tx);
}

/** Milliseconds of GET `path` over keep-alive HTTP: `warm` untimed, then `runs` timed; throws on a non-2xx. */
export async function timeGet(base: string, path: string, key: string | null, runs = 15, warm = 3): Promise<{ median: number; p90: number; body: unknown }> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  let body: unknown;
  const times: number[] = [];
  for (let r = 0; r < warm + runs; r++) {
    const t = performance.now();
    const res = await fetch(`${base}${path}`, { headers });
    const text = await res.text();
    const ms = performance.now() - t;
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
    if (r >= warm) times.push(ms);
    body = text.startsWith('{') ? JSON.parse(text) : text;
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, p90: times[Math.min(times.length - 1, Math.floor(times.length * 0.9))]!, body };
}

/** The machine's load (1-minute average) and CPU pressure, printed beside every run: the machine is shared. */
export async function machineLoad(): Promise<string> {
  const { readFileSync } = await import('node:fs');
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  let pressure = '';
  try {
    pressure = `, CPU pressure ${/avg10=([\d.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]} %`;
  } catch {
    // no PSI on this kernel
  }
  return `load ${load} on ${(await import('node:os')).cpus().length} cores${pressure}`;
}
