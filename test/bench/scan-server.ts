/**
 * Child process for the scan benchmark: `node test/bench/scan-server.ts scan <db-file>` serves the
 * scan path from that database (trusting X-Forwarded-For, like a deployment behind a proxy);
 * `node test/bench/scan-server.ts bare` is the baseline, a bare http server answering 302.
 * Prints `listening <port>` when ready.
 */
import http from 'node:http';
import { openDatabase } from '../../server/db/database.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { createScanHandler } from '../../server/features/scans/handler.ts';

const [mode, file] = process.argv.slice(2);
let server: http.Server;
if (mode === 'bare') {
  server = http.createServer((_req, res) => {
    res.writeHead(302, { location: 'https://example.com/landing', 'cache-control': 'no-store', 'content-length': '0' });
    res.end();
  });
} else {
  const db = openDatabase(file as string, { synchronous: process.env.SYNC === 'normal' ? 'normal' : 'full' });
  const handler = createScanHandler({
    db,
    clock: systemClock,
    config: { trustProxy: true },
    writer: process.env.SCAN_WRITER === 'inline' ? 'inline' : 'worker',
  });
  server = http.createServer((req, res) => {
    if (!handler(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
}
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
