import fc from 'fast-check';
import { describe, it } from 'vitest';
import { testBackend } from '../support/server.ts';
import { syncProperty } from './model.ts';

/*
 * Model-based sync test (fast-check): a remote and three sites behind fault proxies, random
 * creates, edits, deletes, batches, scans, partitions, wire faults (drops after commit, resets
 * mid-body, duplicates, latency), restarts and clock ticks; then quiet, and every invariant of
 * docs/sync.md checked (see model.ts). A failing run prints its seed and path: keep it in
 * regressions.test.ts. SYNC_MODEL_RUNS / SYNC_MODEL_PROCESS_RUNS raise the number of runs;
 * `node test/sync/explore.ts 200 [--processes]` hunts seeds without vitest's time limit.
 *
 * The suite replays fixed seeds, so a red run always means a change broke something, never that
 * a new random draw found an old bug. SYNC_MODEL_SEED=random (or a number) draws other runs.
 */
const SEEDS = { inProcess: 20261121, processes: 20261122 };
const seedFor = (fixed: number): { seed?: number } => {
  const chosen = process.env.SYNC_MODEL_SEED;
  if (chosen === 'random') return {};
  return { seed: chosen ? Number(chosen) : fixed };
};

/**
 * Runs per backend of the remote (vitest.config.ts runs this file on both). With the remote on
 * PostgreSQL, fewer runs: each run creates a database of its own and every read of the remote's
 * rows opens a connection to it, so a run takes longer (8 in-process runs took 213 s on the loaded 2-core
 * machine on 2026-11-26, near the 300 s bound), and the whole suite must stay under CI's 30 minutes.
 * The SQLite runs stay the broad search (40 in-process runs: 60 took 124 s of a CI run that had
 * reached 29 minutes; `node test/sync/explore.ts` searches further without a time limit); the
 * PostgreSQL ones check that the same invariants hold with a central instance on PostgreSQL.
 */
const RUNS = testBackend === 'postgres' ? { inProcess: 5, processes: 2 } : { inProcess: 40, processes: 5 };

describe(`sync model (remote on ${testBackend})`, () => {
  it('in-process servers with a manual clock: random writes, partitions, faults and restarts converge', { timeout: 300_000 }, async () => {
    await fc.assert(syncProperty(), { numRuns: Number(process.env.SYNC_MODEL_RUNS ?? RUNS.inProcess), ...seedFor(SEEDS.inProcess) });
  });

  it('real processes, restarts by SIGKILL: random writes, partitions and faults converge', { timeout: 300_000 }, async () => {
    await fc.assert(syncProperty({ processes: true, maxCommands: 15 }), { numRuns: Number(process.env.SYNC_MODEL_PROCESS_RUNS ?? RUNS.processes), ...seedFor(SEEDS.processes) });
  });
});
