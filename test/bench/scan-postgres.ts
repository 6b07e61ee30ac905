/**
 * The scan path of a central instance on PostgreSQL (issue 19, "Performance"): scans/s and p99 for
 * one and for two processes on PostgreSQL (the two behind one port, connections handed out in
 * turn by node:cluster, test/bench/_scan-cluster.ts), beside one process on SQLite in the same run
 * (the app as serve runs it, test/bench/_scan-server.ts). The same 200 redirect nodes with three
 * rules each, the same load as `scan` (test/bench/_scan-load.ts: 50 connections, BENCH_DURATION s
 * after a 10 000-request warm-up). Afterwards: every 302 has its scan event and scan_count on each
 * backend. PostgreSQL's own CPU (its backends) is not in the figures: it runs on the same 2 cores.
 *
 *   WAYMARK_TEST_DATABASE=postgres://… node test/bench/scan-postgres.ts
 *     (a server on which it may create databases; BENCH_DURATION, default 10; BENCH_SLUGS, 200)
 * Without a PostgreSQL server it says so and exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { openDatabase } from '../../server/db/database.ts';
import { PostgresStore } from '../../server/db/postgresStore.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';
import type { Store } from '../../server/db/store.ts';
import { databaseFile } from '../../server/serve.ts';
import { freshPostgresDatabase, postgresMissing } from '../support/stores.ts';
import { type Figures, load, slugOf } from './_scan-load.ts';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const slugCount = Number(process.env.BENCH_SLUGS ?? 200);
const connections = 50;
const here = import.meta.dirname;

async function seed(store: Store): Promise<string[]> {
  const org = randomUUID();
  const now = new Date().toISOString();
  const slugs: string[] = [];
  await store.transaction(async (tx) => {
    await tx.insertInto('organizations').values({ id: org, name: 'Bench', created_at: now }).execute();
    for (let i = 0; i < slugCount; i++) {
      const id = randomUUID();
      const slug = slugOf(i);
      slugs.push(slug);
      await tx.insertInto('slugs').values({ slug, org_id: org, node_id: id, minted_at: now }).execute();
      await tx
        .insertInto('nodes')
        .values({ id, org_id: org, slug, label: `Bench ${i}`, function_type: 'redirect', payload_json: JSON.stringify({ url: `https://example.com/landing/${i}` }), status: 'active', created_at: now, updated_at: now })
        .execute();
      // A night-time window in a far zone, a country rule and a 30% split: all three evaluated.
      const rule = (rule_type: string, conditions: unknown, url: string, priority: number) => ({
        id: randomUUID(), node_id: id, rule_type, conditions_json: JSON.stringify(conditions), function_type: 'redirect', payload_json: JSON.stringify({ url }), priority, enabled: 1, created_at: now, updated_at: now,
      });
      await tx
        .insertInto('rules')
        .values([
          rule('time_based', { timezone: 'Pacific/Auckland', windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start_time: '03:00', end_time: '03:01' }] }, 'https://example.com/night', 0),
          rule('geo_based', { countries: ['FR', 'BE'] }, 'https://example.com/fr', 1),
          rule('traffic_split', { weight: 30 }, 'https://example.com/b', 2),
        ])
        .execute();
    }
  });
  return slugs;
}

async function start(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; port: number; pids: number[] }> {
  const child = spawn(process.execPath, [join(here, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const lines = createInterface({ input: child.stdout! });
  const [port, ...pids] = await new Promise<number[]>((resolve, reject) => {
    lines.on('line', (line) => {
      const m = /^listening (\d+)((?: \d+)*)/.exec(line);
      if (m) resolve([Number(m[1]), ...(m[2] ?? '').trim().split(' ').filter(Boolean).map(Number)]);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, port: port as number, pids: pids.length > 0 ? pids : [child.pid as number] };
}

async function stop(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function counts(store: Store): Promise<{ events: number; counted: number }> {
  const e = await store.db.selectFrom('scan_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const c = await store.db.selectFrom('nodes').select((eb) => eb.fn.sum<number>('scan_count').as('n')).executeTakeFirstOrThrow();
  return { events: Number(e.n), counted: Number(c.n ?? 0) };
}

const row = (name: string, f: Figures) =>
  `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(7)} scans/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(4)} ms   ${f.cpuPerRequest.toFixed(0)} µs CPU/scan in the scan processes (${f.mainCpuPerRequest.toFixed(0)} on their main threads)   CPU pressure ${f.pressure.toFixed(0)} %`;

if (postgresMissing) {
  console.log(`scan-postgres: skipped (${postgresMissing})`);
} else {
  console.log(`scan benchmark, PostgreSQL beside SQLite: ${connections} connections, ${duration} s per server, ${slugCount} redirect nodes with 3 rules each`);
  const dir = mkdtempSync(join(tmpdir(), 'waymark-bench-pg-'));
  const results: Array<{ name: string; figures: Figures; ok: boolean; check: string }> = [];
  try {
    // SQLite, one process (the app, synchronous=FULL with the off-thread flush, as shipped).
    {
      const sqlite = openDatabase(databaseFile(dir));
      const store = new SqliteStore(sqlite);
      const slugs = await seed(store);
      const server = await start('_scan-server.ts', ['scan', dir, 'full']);
      const figures = await load(server.port, slugs, { connections, duration, pids: server.pids });
      await stop(server.child);
      const c = await counts(store);
      await store.close();
      sqlite.close();
      const served = figures.redirects + figures.warmRedirects;
      results.push({ name: 'SQLite, 1 process', figures, ok: c.events >= served && c.events <= served + figures.cutOff && c.counted === c.events, check: `${served} × 302, ${c.events} events, scan_count ${c.counted}` });
    }
    for (const processes of [1, 2]) {
      const database = await freshPostgresDatabase();
      const store = await PostgresStore.open(database.url, { poolSize: 2 });
      try {
        const slugs = await seed(store);
        const server = await start('_scan-cluster.ts', [database.url, String(processes)]);
        const figures = await load(server.port, slugs, { connections, duration, pids: server.pids });
        await stop(server.child);
        const c = await counts(store);
        const served = figures.redirects + figures.warmRedirects;
        results.push({ name: `PostgreSQL, ${processes} process${processes > 1 ? 'es' : ''}`, figures, ok: c.events >= served && c.events <= served + figures.cutOff && c.counted === c.events, check: `${served} × 302, ${c.events} events, scan_count ${c.counted}` });
      } finally {
        await store.close();
        await database.drop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const r of results) console.log(row(r.name, r.figures));
  const base = results[0]?.figures.rps ?? Number.NaN;
  for (const r of results.slice(1)) console.log(`${r.name}: ${(r.figures.rps / base).toFixed(2)}× SQLite's scans/s`);
  for (const r of results) console.log(`count check, ${r.name}: ${r.ok ? 'OK' : 'MISMATCH'} (${r.check})`);
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}
