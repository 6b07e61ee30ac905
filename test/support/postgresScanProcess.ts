/**
 * One process of a central instance's scan path on PostgreSQL, for the multi-process tests and
 * the PostgreSQL scan benchmark (until `serve --database` starts on PostgreSQL, issue 19): the real
 * scan handler on the PostgreSQL storage, as createApp wires it, and the background fold; and
 * `POST /change?slug=…&url=…`, which commits a node's new destination through this process's store
 * and answers after the commit (what the API's PATCH does; the triggers move the scan-cache epoch).
 *
 *   node test/support/postgresScanProcess.ts <database-url> [port]
 *
 * Env: SCAN_STALE_MS (the cache bound), SCAN_TRUST_PROXY=1, TAP_PROOF_KEYS=<file> (tap proofs
 * checked with the master keys of that file, as `serve --tap-proof-keys` wires them). Prints `listening <port>`; exits on
 * SIGTERM after closing. With several processes on one port (node:cluster in the benchmark) the
 * primary hands out the connections.
 */
import http from 'node:http';
import { PostgresStore } from '../../server/db/postgresStore.ts';
import { ScanAnalytics } from '../../server/features/scans/analytics.ts';
import { createScanHandler } from '../../server/features/scans/handler.ts';
import { PasswordAttempts } from '../../server/features/scans/passwordAttempts.ts';
import { postgresScanStorage } from '../../server/features/scans/postgresStorage.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { subscriptionCheck } from '../../server/features/webhooks/index.ts';
import { createTapProofs } from '../../server/features/tapproofs/index.ts';
import { FileSecretStore } from '../../server/platform/secrets.ts';

const [url, port] = process.argv.slice(2);
if (!url) throw new Error('usage: postgresScanProcess.ts <database-url> [port]');
const onError = (err: unknown) => console.error('scan process:', err);
const store = await PostgresStore.open(url, { poolSize: 4, applicationName: `waymark-scans-${process.pid}` });
const staleMs = process.env.SCAN_STALE_MS ? Number(process.env.SCAN_STALE_MS) : undefined;
const tapProofs = process.env.TAP_PROOF_KEYS
  ? createTapProofs({
      store,
      clock: systemClock,
      keyStore: new FileSecretStore(process.env.TAP_PROOF_KEYS),
    }).service
  : null;
const scans = createScanHandler({
  ...(tapProofs ? { tapProofs: { claims: (query: URLSearchParams) => tapProofs.kindOf(query) !== null, check: tapProofs.check.bind(tapProofs) } } : {}),
  storage: postgresScanStorage({ store, subscribed: subscriptionCheck('postgres'), onError, ...(staleMs ? { staleMs } : {}) }),
  clock: systemClock,
  config: { trustProxy: process.env.SCAN_TRUST_PROXY === '1' },
  passwordAttempts: new PasswordAttempts(store, { onError }),
  onError,
});
const analytics = new ScanAnalytics(store, systemClock);
analytics.start(() => scans.lastScanAt());

const server = http.createServer((req, res) => {
  if (scans(req, res)) return;
  const target = new URL(req.url ?? '/', 'http://localhost');
  if (req.method === 'POST' && target.pathname === '/change') {
    const slug = target.searchParams.get('slug') ?? '';
    const destination = target.searchParams.get('url') ?? '';
    store
      .transaction(async (tx) => {
        await tx
          .updateTable('nodes')
          .set({ payload_json: JSON.stringify({ url: destination }), updated_at: new Date().toISOString() })
          .where('slug', '=', slug)
          .execute();
      })
      .then(
        () => {
          res.writeHead(204);
          res.end();
        },
        (err: unknown) => {
          onError(err);
          res.writeHead(500);
          res.end();
        },
      );
    return;
  }
  res.writeHead(404);
  res.end();
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => {
    void (async () => {
      await analytics.stop();
      await scans.close();
      await store.close();
      process.exit(0);
    })();
  });
  server.closeAllConnections();
});
