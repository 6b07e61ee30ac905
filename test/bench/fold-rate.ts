/**
 * The roll-up fold under a sustained scan load (issue 19, "Performance": "the fold keeping up
 * with a sustained 5,000 scans/s"), on SQLite and on PostgreSQL in the same run. The real
 * `waymark serve --trust-proxy` on loopback with 200 redirect nodes; autocannon sends
 * BENCH_FOLD_RATE scans/s (default 5,000, paced by autocannon's overallRate, 50 connections) for
 * BENCH_FOLD_DURATION s (default 60: SQLite's backlog takes ~20 s to settle) with nothing
 * querying analytics, so only the background fold runs. Every second the benchmark reads the backlog (scan events recorded but not folded) from
 * the database; the baseline is the scans recorded in the same second, so "keeping up" is the
 * fold's events/s beside the scans/s and a backlog that stays bounded. After the load: how long
 * the background fold takes to empty the backlog, and a check that the roll-ups hold every scan.
 *
 *   node test/bench/fold-rate.ts   (WAYMARK_TEST_DATABASE for the PostgreSQL rows)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { systemClock } from '../../server/platform/clock.ts';
import { ScanAnalytics } from '../../server/features/scans/analytics.ts';
import { AnalyticsRepo } from '../../server/features/scans/analyticsRepo.ts';
import type { Store } from '../../server/db/store.ts';
import { scanOf, scanWriterFor } from '../support/scanSeed.ts';
import { USER_AGENTS } from './_scan-load.ts';
import { type Backend, backends, bulk, machineLoad, openInstance, seedNodes } from './_instance.ts';

/** Ms from `since` until the backlog is empty (polled every 250 ms, at most 10 min); NaN if it never was. */
async function drained(backlog: () => Promise<number>, since: number): Promise<number> {
  for (let waited = 0; waited < 600_000; waited += 250) {
    if ((await backlog()) === 0) return performance.now() - since;
    await sleep(250);
  }
  return Number.NaN;
}

const RATE = Number(process.env.BENCH_FOLD_RATE ?? 5000);
const DURATION = Number(process.env.BENCH_FOLD_DURATION ?? 60);
const NODES = 200;
const MODE = process.env.BENCH_FOLD_MODE ?? 'http';
/** Rows mode: a batch every TICK_MS, as the server's group commit writes them under load. */
const TICK_MS = 10;
/** At most this many rows in one write (a writer behind catches up in several; PostgreSQL takes at most 65,535 parameters a statement). */
const MAX_BATCH = 1000;

async function measure(backend: Backend): Promise<boolean> {
  return MODE === 'rows' ? measureRows(backend) : MODE === 'both' ? (await measureHttp(backend)) && (await measureRows(backend)) : measureHttp(backend);
}

async function counts(store: Store) {
  const recorded = Number((await store.db.selectFrom('scan_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const human = Number((await store.db.selectFrom('scan_events').select((eb) => eb.fn.countAll<number>().as('n')).where('is_bot', '=', 0).executeTakeFirstOrThrow()).n);
  const folded = Number((await store.db.selectFrom('scan_rollups').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('scans'), eb.lit(0)).as('n')).where('dim', '=', '').executeTakeFirstOrThrow()).n);
  return { recorded, human, folded };
}

/** The fold alone: the scan writer's rows at exactly RATE/s in this process, beside the product's background fold. */
async function measureRows(backend: Backend): Promise<boolean> {
  const instance = await openInstance(backend);
  const { store } = instance.opened;
  const repo = new AnalyticsRepo(store.dialect);
  const analytics = new ScanAnalytics(store, systemClock);
  try {
    const { orgId } = await instance.organization('Fold');
    await bulk(instance, (tx) => seedNodes(instance, tx, orgId, NODES, { kind: 1, prefix: 'B', createdFrom: Date.now() - 86_400_000 }));
    const nodeIds = (await store.db.selectFrom('nodes').select('id').where('org_id', '=', orgId).execute()).map((n) => n.id);
    const write = scanWriterFor(store);
    let lastScanAt = 0;
    analytics.start(() => lastScanAt);
    const samples: Array<{ at: number; backlog: number }> = [];
    const t0 = performance.now();
    let written = 0;
    let nextSample = 0;
    while (performance.now() - t0 < DURATION * 1000) {
      const elapsed = performance.now() - t0;
      if (elapsed >= nextSample) {
        samples.push({ at: elapsed / 1000, backlog: await repo.backlog(store.db) });
        nextSample += 1000;
      }
      // Due by now at RATE/s; a batch behind is written at once (the rate recorded shows whether the writer kept the pace).
      const due = Math.min(MAX_BATCH, Math.floor((elapsed / 1000) * RATE) - written);
      if (due > 0) {
        const at = Date.now();
        const batch = Array.from({ length: due }, (_, i) => {
          const n = written + i;
          return scanOf(nodeIds[n % nodeIds.length] as string, orgId, {
            ts: at,
            device_type: ['mobile', 'desktop', 'tablet'][n % 3] as string,
            country: ['FR', 'DE', 'US', null][n % 4] as string | null,
            visitor_hash: `v${n % 5000}`,
          });
        });
        await write(batch);
        written += due;
        lastScanAt = Date.now();
      }
      await sleep(TICK_MS);
    }
    const loadEnd = performance.now();
    const atEnd = { backlog: await repo.backlog(store.db) };
    const drainedMs = await drained(() => repo.backlog(store.db), loadEnd);
    await analytics.stop();
    const { recorded, human, folded } = await counts(store);
    const rate = (recorded / DURATION).toFixed(0);
    const maxBacklog = Math.max(...samples.map((s) => s.backlog), atEnd.backlog);
    const foldedDuringLoad = recorded - atEnd.backlog;
    console.log(`${backend}, rows written by the scan writer (${await machineLoad()}):`);
    console.log(`  load: ${RATE} scans/s asked for ${DURATION} s, in batches every ${TICK_MS} ms → ${recorded} scans recorded (${rate}/s)`);
    console.log(`  fold during the load: ${foldedDuringLoad} events (${(foldedDuringLoad / DURATION).toFixed(0)}/s); backlog at the end ${atEnd.backlog}, largest seen ${maxBacklog}`);
    console.log(`  backlog by second: ${samples.map((s) => `${s.at.toFixed(0)}s ${s.backlog}`).join(', ')}`);
    console.log(`  after the load: background fold empties the backlog in ${Number.isNaN(drainedMs) ? 'more than 600 s' : `${(drainedMs / 1000).toFixed(1)} s`}; roll-ups hold ${folded} of ${human} human scans ${folded === human ? '(OK)' : '(MISMATCH)'}`);
    // Bounded: the backlog stopped growing, its value at the end no larger than the largest of the
    // first half of the run (where it settles, the fold folds as fast as scans come).
    const firstHalf = Math.max(...samples.filter((s) => s.at < DURATION / 2).map((s) => s.backlog));
    const bounded = atEnd.backlog <= firstHalf;
    console.log(`  kept up: ${bounded ? 'yes' : 'NO'} (backlog at the end ${atEnd.backlog} ${bounded ? '≤' : '>'} the largest of the first half, ${firstHalf}: ${bounded ? 'bounded' : 'still growing'})`);
    return bounded && folded === human;
  } finally {
    await analytics.stop();
    await instance.close();
  }
}

async function measureHttp(backend: Backend): Promise<boolean> {
  const instance = await openInstance(backend);
  const { store } = instance.opened;
  const repo = new AnalyticsRepo(store.dialect);
  try {
    const { orgId } = await instance.organization('Fold');
    await bulk(instance, (tx) => seedNodes(instance, tx, orgId, NODES, { kind: 1, prefix: 'B', createdFrom: Date.now() - 86_400_000 }));
    const server = await instance.serve(['--trust-proxy']);
    const recorded = async () => Number((await store.db.selectFrom('scan_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const folded = async () => Number((await store.db.selectFrom('scan_rollups').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('scans'), eb.lit(0)).as('n')).where('dim', '=', '').executeTakeFirstOrThrow()).n);
    const requests = Array.from({ length: 1000 }, (_, i) => ({
      method: 'GET' as const,
      path: `/v/B${String(i % NODES).padStart(7, '0')}`,
      headers: { 'user-agent': USER_AGENTS[i % USER_AGENTS.length] as string, 'x-forwarded-for': `${((i * 37) % 223) + 1}.${(i * 11) % 256}.${(i * 7) % 256}.${(i % 254) + 1}` },
    }));
    const samples: Array<{ at: number; recorded: number; backlog: number }> = [];
    let running = true;
    const t0 = performance.now();
    const sampler = (async () => {
      while (running) {
        samples.push({ at: (performance.now() - t0) / 1000, recorded: await recorded(), backlog: await repo.backlog(store.db) });
        await sleep(1000);
      }
    })();
    const result = await autocannon({ url: server.url, connections: 50, duration: DURATION, overallRate: RATE, requests });
    running = false;
    await sampler;
    const redirects = Number(result.statusCodeStats['302']?.count ?? 0);
    const loadEnd = performance.now();
    const atEnd = { recorded: await recorded(), backlog: await repo.backlog(store.db) };
    // The background fold alone (nothing queries): time until nothing is pending.
    const drainedMs = await drained(() => repo.backlog(store.db), loadEnd);
    await server.stop();
    const human = Number((await store.db.selectFrom('scan_events').select((eb) => eb.fn.countAll<number>().as('n')).where('is_bot', '=', 0).executeTakeFirstOrThrow()).n);
    const inRollups = await folded();
    const sent = (atEnd.recorded / DURATION).toFixed(0);
    const maxBacklog = Math.max(...samples.map((s) => s.backlog), atEnd.backlog);
    const foldedDuringLoad = atEnd.recorded - atEnd.backlog;
    console.log(`${backend} (${await machineLoad()}):`);
    console.log(`  load: ${RATE} scans/s asked for ${DURATION} s → ${redirects} × 302, ${atEnd.recorded} scans recorded (${sent}/s; the baseline the fold has to match), p99 ${result.latency.p99} ms`);
    console.log(`  fold during the load: ${foldedDuringLoad} events (${(foldedDuringLoad / DURATION).toFixed(0)}/s) beside ${sent} scans/s recorded; backlog at the end ${atEnd.backlog}, largest seen ${maxBacklog}`);
    console.log(`  backlog by second: ${samples.filter((_, i) => i % 5 === 0).map((s) => `${s.at.toFixed(0)}s ${s.backlog}`).join(', ')}`);
    console.log(`  after the load: background fold empties the backlog in ${Number.isNaN(drainedMs) ? 'more than 600 s' : `${(drainedMs / 1000).toFixed(1)} s`}; roll-ups hold ${inRollups} of ${human} human scans ${inRollups === human ? '(OK)' : '(MISMATCH)'}`);
    const keptUp = atEnd.backlog <= Math.max(RATE * 2, 10_000);
    console.log(`  kept up: ${keptUp ? 'yes' : 'NO'} (backlog at the end ≤ two seconds of scans)`);
    return keptUp && inRollups === human;
  } finally {
    await instance.close();
  }
}

console.log(`fold-rate: ${RATE} scans/s for ${DURATION} s on ${NODES} nodes, the background fold alone (${MODE === 'rows' ? 'rows written in this process' : MODE === 'both' ? 'over HTTP, then rows written in this process' : 'over HTTP'})`);
let ok = true;
for (const backend of backends()) ok = (await measure(backend)) && ok;
if (!ok) process.exitCode = 1;
