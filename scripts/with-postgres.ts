// Runs a command with WAYMARK_TEST_DATABASE pointing at a private PostgreSQL cluster started for
// it and stopped after it (test/support/postgres-cluster.ts). `npm test` runs every suite this way.
//   node scripts/with-postgres.ts <command> [args…]
// A WAYMARK_TEST_DATABASE already set is used as it is (no cluster is started).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { startPostgresCluster, type PostgresCluster } from '../test/support/postgres-cluster.ts';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/with-postgres.ts <command> [args…]');
  process.exit(2);
}

let cluster: PostgresCluster | null = null;
const env = { ...process.env };
if (!env.WAYMARK_TEST_DATABASE) {
  try {
    cluster = await startPostgresCluster();
  } catch (err) {
    console.error(`PostgreSQL: the private test cluster did not start: ${(err as Error).message}`);
    process.exit(1);
  }
  if (cluster) env.WAYMARK_TEST_DATABASE = cluster.url;
}

const child = spawn(command, args, { stdio: 'inherit', env, shell: false });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
const code = await new Promise<number>((resolve) => {
  child.once('error', (err) => {
    console.error(`${command}: ${err.message}`);
    resolve(127);
  });
  child.once('exit', (status, signal) => resolve(status ?? 128 + (signal ? constants.signals[signal] : 0)));
});
cluster?.stop();
process.exit(code);
