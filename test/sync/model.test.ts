import fc from 'fast-check';
import { describe, it } from 'vitest';
import { startTestServer } from '../support/server.ts';
import { syncProperty } from './model.ts';

/*
 * Model-based sync test (fast-check): a remote and three in-process sites behind fault proxies,
 * random creates, edits, deletes, batches, scans, partitions, wire faults, restarts and clock
 * ticks; then quiet, and every invariant of docs/sync.md checked (see model.ts). A failing run
 * prints its seed and path: keep it in regressions.test.ts.
 */

/** Push/pull are built on another branch; until the remote has them this test has nothing to run. */
async function hasPushPull(): Promise<boolean> {
  const s = await startTestServer();
  try {
    return (await s.api('POST', '/sync/push', {})).status !== 404;
  } finally {
    await s.close();
  }
}

describe('sync model', () => {
  it('random writes, partitions, faults and restarts on three sites converge with the remote', { timeout: 110_000 }, async (ctx) => {
    if (!(await hasPushPull())) ctx.skip();
    await fc.assert(syncProperty(), { numRuns: Number(process.env.SYNC_MODEL_RUNS ?? 8), interruptAfterTimeLimit: 90_000, markInterruptAsFailure: false });
  });
});
