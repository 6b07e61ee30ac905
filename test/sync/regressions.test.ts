import fc from 'fast-check';
import { describe, it } from 'vitest';
import { testBackend } from '../support/server.ts';
import { runScenario, steps as s, syncProperty } from './model.ts';

/*
 * Failing runs the sync model found (test/sync/model.test.ts, node test/sync/explore.ts), kept
 * as regressions: each replays its seed and shrunk path (commands also need the replayPath
 * fast-check prints in the counterexample). A path is only meaningful for the
 * command generators it was found with: changing `commands` in model.ts means finding the seeds
 * again (the shrunk steps are written out below so the scenario can be rebuilt by hand).
 */

interface Case {
  title: string;
  seed: number;
  path: string;
  replayPath: string;
  /** The command generators the seed was found with (model.ts). */
  generators: 'v1' | 'v2';
  processes?: boolean;
  /** model.ts's MAX_COMMANDS unless the seed was found with another (explore.ts --max). */
  maxCommands?: number;
  /** The shrunk steps, replayed as they are (actor 0 is the remote, 1..3 the sites). */
  steps: Parameters<typeof runScenario>[0];
}

const cases: Case[] = [
  {
    // 1 locked template @site1; 2 sync @site1; 3 delete it @site1 (not pushed yet); 4 edit it
    // @remote; 5 delete it @remote; 6 batch @remote. Two deletes: the site's, earlier, reached the
    // remote after the remote's own, and was dropped as "already deleted", so the remote's edit
    // between the two deletes was never logged (fixed: the earlier delete wins, migration 059).
    title: 'an earlier delete arriving after a later one logs the edits made between them',
    seed: 287887589,
    path: '8:9:11:15:18:25:20:8:17:17:17:17:17:14:5:12:12:12',
    replayPath: '//6:H',
    generators: 'v2',
    steps: [s.lockedTemplate(1), s.sync(1), s.remove(1, 0), s.edit(0, 0, 0), s.remove(0, 0), s.batch(0, 1)],
  },
  {
    // 1 create node @site2; 2 scan it @site2; 3 restart @site2 (its background round pushes the
    // scan); 4 scan it twice @remote; 5 restart @remote. The model counted the scans made at the
    // remote as "all rows there", which included the site's scan pushed meanwhile (a test bug:
    // the model now counts local scans only, sync_id IS NULL).
    title: 'scans made at the remote are counted apart from the scans sites push meanwhile',
    seed: 1865151028,
    path: '8:2:2:5:10:9:10:12:12:14',
    replayPath: '/Y:D',
    generators: 'v2',
    steps: [s.create(2, 'node', 0), s.scan(2, 0, 1), s.restart(2), s.scan(0, 0, 2), s.restart(0)],
  },
  {
    // 1 batch 1 @remote; 2 sync @site3; 3 partition down @site3 (answers lost after commit);
    // 4 edit node#0 @site3 (its background push commits, the answer is lost); 5 scan node#0 @site3.
    // Healed, the site retried with the same token and the scan in the request; the remote
    // answered the retry from memory without storing the scan, and the site marked it pushed.
    title: 'a scan sent in the retry of a push whose answer was lost is stored, not dropped',
    seed: -1694957005,
    path: '35:8:9:13:12:15:15:18:19:11:18:18:20:20:20:20',
    replayPath: '//6:H',
    generators: 'v1',
    steps: [s.batch(0, 1), s.sync(3), s.partition(3, 'down'), s.edit(3, 0, 0), s.scan(3, 0, 1), s.partition(1, 'up')],
  },
  {
    // 1 batch @remote; 2 restart @remote; 3 edit node#0 @remote: "fetch failed: other side
    // closed", about one run in four. The test's fetch reused a kept-alive socket the stopped
    // server had closed, before the event loop had read its end (a test bug: cluster.ts now lets
    // two event-loop turns pass after an in-process stop).
    title: 'a request right after an in-process restart does not reuse a connection the old server closed',
    seed: -1932464412,
    path: '17:8:2:6:23:5:14:10:18:7:7:5:3:4:4:9:4:6:3:4:5:3:4:6:11:26',
    replayPath: 'LN/0:N',
    generators: 'v2',
    steps: [s.batch(0, 1, true), s.restart(0), s.edit(0, 223194015, 1646407194)],
  },
  {
    // Found once the model compared tombstones (invariant 7), 48 steps unshrunk; by hand: 1 create
    // node @remote; 2 create a rule on it @remote; 3 delete the node @remote. The rule's delete
    // (by the foreign key's cascade, after the node row was gone) was captured with no
    // organization, so the remote never fed it on (nor would a site have pushed it): the sites
    // tombstoned the rule at the node's delete, one HLC tick later than the remote (fixed:
    // migration 061 deletes the rules first).
    title: "a node's rules' deletes travel with the node's delete, so their tombstones agree",
    seed: 332471391,
    path: '74',
    replayPath: ':',
    generators: 'v2',
    maxCommands: 60,
    steps: [s.create(0, 'node', 0), s.create(0, 'rule', 0), s.remove(0, 0)],
  },
];

/**
 * Conflict-log scenarios the model's invariant exposed, pinned with partitions so the order in
 * which changes reach the remote is fixed (written out, not seeds: a background push after each
 * local write makes that order a matter of timing in random runs).
 */
const scenarios: Array<{ title: string; steps: Case['steps']; processes?: boolean }> = [
  {
    // Found by the process variant (seed -635811910, v1 generators, path 2:2:4:1:3:1, replayPath
    // p:B): a batch at the remote, then nothing else. The pulled slug rows carried minted_at = the
    // node's created_at, a millisecond after the remote minted them (fixed on sync-core: the
    // creation carries minted_at, migration 056).
    title: 'slug rows of pulled nodes are the same as at the remote, minted_at included (real processes)',
    processes: true,
    steps: [s.batch(0, 9), s.fault(2, 'drop-request', 'push')],
  },
  {
    title: 'an edit made after a delete but reaching the remote first is logged when the delete arrives',
    steps: [s.create(0, 'node', 0), s.sync(1), s.sync(2), s.partition(1, 'both'), s.remove(1, 0), s.edit(2, 0, 0), s.sync(2), s.heal(1), s.sync(1)],
  },
  {
    title: 'an edit made after a delete and reaching the remote after it is logged',
    steps: [s.create(0, 'node', 0), s.sync(1), s.sync(2), s.partition(2, 'both'), s.remove(1, 0), s.sync(1), s.edit(2, 0, 0), s.heal(2), s.sync(2)],
  },
  {
    title: 'a rule created (then edited) on a node deleted elsewhere is logged, not dropped silently',
    steps: [s.create(0, 'node', 0), s.sync(1), s.sync(2), s.partition(2, 'both'), s.remove(1, 0), s.sync(1), s.create(2, 'rule', 0), s.edit(2, 1, 0), s.heal(2), s.sync(2)],
  },
  {
    title: 'a rule created on a node deleted elsewhere and reaching the remote first is logged when the delete arrives',
    steps: [s.create(0, 'node', 0), s.sync(1), s.sync(2), s.partition(1, 'both'), s.remove(1, 0), s.create(2, 'rule', 0), s.sync(2), s.heal(1), s.sync(1)],
  },
  {
    title: 'an edit made before a delete and reaching the remote after it may be logged (never more than once)',
    steps: [s.create(0, 'node', 0), s.sync(1), s.sync(2), s.partition(2, 'both'), s.edit(2, 0, 0), s.remove(1, 0), s.sync(1), s.heal(2), s.sync(2)],
  },
];

describe('sync model regressions', () => {
  for (const c of scenarios) {
    it(c.title, { timeout: 60_000 }, async () => {
      await runScenario(c.steps, { processes: c.processes ?? false });
    });
  }
  for (const c of cases) {
    // A seeded case replays many rounds of real processes: a loaded 2-core machine needs minutes.
    // With the remote on PostgreSQL only the written-out steps run: a seed's path replays dozens of
    // runs (32 for seed 1865151028), each reading the remote through a new connection, which took
    // over 8 minutes there; the seeds were found with a SQLite remote and replay on it.
    it.skipIf(testBackend === 'postgres')(`${c.title} (seed ${c.seed})`, { timeout: 240_000 }, async () => {
      await fc.assert(syncProperty({ processes: c.processes ?? false, replayPath: c.replayPath, generators: c.generators, ...(c.maxCommands ? { maxCommands: c.maxCommands } : {}) }), { seed: c.seed, path: c.path, numRuns: 1, endOnFailure: true });
    });
    it(`${c.title} (steps)`, { timeout: 60_000 }, async () => {
      await runScenario(c.steps, { processes: c.processes ?? false });
    });
  }
});
