/**
 * N processes of the PostgreSQL scan path (test/support/postgresScanProcess.ts) behind one port:
 * node:cluster's primary accepts the connections and hands them to the processes in turn (round
 * robin), as a load balancer in front of a central instance would.
 *
 *   node test/bench/_scan-cluster.ts <database-url> <processes>
 *
 * Prints `listening <port> <pid> <pid> …` (the processes' pids) once all listen; SIGTERM stops them.
 */
import cluster from 'node:cluster';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [url, count] = process.argv.slice(2);
const n = Number(count ?? 2);
cluster.schedulingPolicy = cluster.SCHED_RR;
cluster.setupPrimary({ exec: join(import.meta.dirname, '..', 'support', 'postgresScanProcess.ts'), args: [url as string, '0'], silent: true });
const workers = Array.from({ length: n }, () => cluster.fork({ SCAN_TRUST_PROXY: '1' }));
const ports = await Promise.all(
  workers.map(
    (w) =>
      new Promise<number>((resolve, reject) => {
        w.process.stderr?.pipe(process.stderr);
        createInterface({ input: w.process.stdout! }).on('line', (line) => {
          const m = /^listening (\d+)/.exec(line);
          if (m) resolve(Number(m[1]));
        });
        w.once('exit', (code) => reject(new Error(`scan process exited with ${code}`)));
      }),
  ),
);
process.stdout.write(`listening ${ports[0]} ${workers.map((w) => w.process.pid).join(' ')}\n`);
process.on('SIGTERM', () => {
  let left = workers.length;
  for (const w of workers) {
    w.once('exit', () => {
      if (--left === 0) process.exit(0);
    });
    w.process.kill('SIGTERM');
  }
});
