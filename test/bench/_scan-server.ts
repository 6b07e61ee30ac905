/**
 * Child process for the scan benchmark.
 *   node test/bench/_scan-server.ts scan <data-dir> [full|normal|full-in-commit]
 *       the real app (createApp: the scan handler in front of Express) on that data dir, as
 *       serve.ts runs it, trusting X-Forwarded-For as behind a proxy; the database opened with
 *       synchronous=FULL (the default: every scan commit flushed before it is answered, by a
 *       WAL fdatasync off the event loop), NORMAL, or FULL with SQLite's fsync inside COMMIT
 *       (both for comparison)
 *       or full-no-tap-keys: FULL, with a tag key store that holds no key, so every tap proof
 *       fails at its first step ("no master key") and is recorded nfc_unverified (the baseline of
 *       the tap-proof comparison: the same URLs, not verified)
 *   node test/bench/_scan-server.ts bare
 *       the baseline: a bare http server answering 302
 * Prints `listening <port>` when ready; exits on SIGTERM after closing.
 */
import http from 'node:http';
import { join } from 'node:path';
import { createApp } from '../../server/app.ts';
import { makeConfig } from '../../server/config.ts';
import { openDatabase } from '../../server/db/database.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { databaseFile } from '../../server/serve.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';
import { FileSecretStore } from '../../server/platform/secrets.ts';

const [mode, dataDir, sync] = process.argv.slice(2);

function listen(server: http.Server, onClose: () => Promise<void>): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.on('SIGTERM', () => {
    server.close(() => void onClose().then(() => process.exit(0)));
    server.closeAllConnections();
  });
}

if (mode === 'bare') {
  const bare = http.createServer((_req, res) => {
    res.writeHead(302, { location: 'https://example.com/landing', 'cache-control': 'no-store', 'content-length': '0' });
    res.end();
  });
  listen(bare, async () => {});
} else {
  const db = openDatabase(databaseFile(dataDir as string), { synchronous: sync === 'normal' ? 'normal' : 'full' });
  const config = makeConfig({ scanBase: 'http://127.0.0.1', trustProxy: true, dataDir: dataDir as string });
  const app = await createApp({
    store: new SqliteStore(db),
    clock: systemClock,
    config,
    logger: { info: () => {}, error: (m, err) => console.error(m, err) },
    scanFlush: sync === 'full-in-commit' ? 'in-commit' : 'off-thread',
    ...(sync === 'full-no-tap-keys' ? { tapProofKeys: new FileSecretStore(join(dataDir as string, 'no-tap-keys.json')) } : {}),
  });
  app.start();
  // The benchmark's settle point: answered once the fold has caught up with every scan so far.
  const handle: http.RequestListener = (req, res) => {
    if (req.url !== '/__bench/folded') return app.handle(req, res);
    void app.services.analytics.caughtUp().then(() => res.writeHead(204).end());
  };
  listen(http.createServer(handle), async () => {
    await app.stop();
    db.close();
  });
}
