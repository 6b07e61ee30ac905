/**
 * Child process for the scan benchmark.
 *   node test/bench/scan-server.ts scan <data-dir>   the real server (serve.ts → createApp: the scan
 *                                                    handler in front of Express) on that data dir,
 *                                                    trusting X-Forwarded-For as behind a proxy
 *   node test/bench/scan-server.ts bare              the baseline: a bare http server answering 302
 * Prints `listening <port>` when ready; exits on SIGTERM after closing.
 */
import http from 'node:http';
import { startServer } from '../../server/serve.ts';

const [mode, dataDir] = process.argv.slice(2);

if (mode === 'bare') {
  const bare = http.createServer((_req, res) => {
    res.writeHead(302, { location: 'https://example.com/landing', 'cache-control': 'no-store', 'content-length': '0' });
    res.end();
  });
  bare.listen(0, '127.0.0.1', () => {
    const address = bare.address();
    process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.on('SIGTERM', () => bare.close(() => process.exit(0)));
} else {
  const running = await startServer({
    host: '127.0.0.1',
    port: 0,
    dataDir: dataDir as string,
    trustProxy: true,
    logger: { info: () => {}, error: (m, err) => console.error(m, err) },
  });
  process.stdout.write(`listening ${new URL(running.url).port}\n`);
  process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
}
