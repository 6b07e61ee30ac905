import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The suites start hundreds of `waymark` processes (servers and CLI commands), each of which
// type-strips and compiles the whole server again. Node's compile cache (inherited by every child
// through the environment) keeps that work between them: a start measured 2.1 s without it and
// 1.1 s with it.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'waymark-test-compile-cache');

/**
 * Suites that run a second time with every test server on PostgreSQL (issue 19: the API, scans,
 * webhooks, batches and sync suites against both backends). Left out: suites about SQLite itself
 * (the hand-written scan writer and its crash and checkpoint behaviour, a full tmpfs volume, the
 * WAL, batch generation killed on one SQLite file: test/processes does that on PostgreSQL), the
 * CLI's own tests, and the hostile-body fuzz (validation runs before storage; its whole-database
 * snapshot per case takes ten minutes on PostgreSQL; test/api/http.test.ts covers what only
 * PostgreSQL refuses, NUL).
 */
const onPostgresToo = [
  'test/api/api-keys.test.ts',
  'test/api/batches.test.ts',
  'test/api/http.test.ts',
  'test/api/import-export.test.ts',
  'test/api/isolation.test.ts',
  'test/api/node-limits.test.ts',
  'test/api/nodes.test.ts',
  'test/api/payloads.test.ts',
  'test/api/rate-limits.test.ts',
  'test/api/rules.test.ts',
  'test/api/slugs.test.ts',
  'test/api/smoke.test.ts',
  'test/api/templates.test.ts',
  'test/print/brand.test.ts',
  'test/scans/limits-processes.test.ts',
  'test/scans/tapProofs.test.ts',
  'test/scans/webhook.test.ts',
  'test/webhooks/api.test.ts',
  'test/webhooks/delivery.test.ts',
  'test/webhooks/disable.test.ts',
  // Sync: the remote on PostgreSQL (a central instance), its sites on SQLite; the sync model and
  // its regressions too (fewer model runs there: model.test.ts). Not here: migrate (a SQLite
  // remote moved to PostgreSQL: it runs in the sqlite project). Sites converging through several
  // PostgreSQL processes are covered by test/processes.
  'test/sync/compaction.test.ts',
  'test/sync/events.test.ts',
  'test/sync/gaps.test.ts',
  'test/sync/leases.test.ts',
  'test/sync/model.test.ts',
  'test/sync/node-limits.test.ts',
  'test/sync/pairing.test.ts',
  'test/sync/qr-style.test.ts',
  'test/sync/regressions.test.ts',
  'test/sync/replication.test.ts',
];

export default defineConfig({
  test: {
    // Bounds on waiting, not on speed (speed is measured by `npm run bench`): tests that start
    // real processes need room on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time on a 2-core machine (vitest's default there is one): most tests wait on
    // child processes, sockets and PostgreSQL rather than the CPU, and CI must stay under 30 min.
    // (Three gave no shorter run on 2026-11-26: 970 s against 988 s, with more load.)
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['server/**/*.test.ts', 'main/**/*.test.ts', 'renderer/**/*.test.{ts,tsx}', 'test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: onPostgresToo,
          env: { WAYMARK_TEST_BACKEND: 'postgres' },
        },
      },
    ],
  },
});
