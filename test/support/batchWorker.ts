/**
 * A batch generator in a process of its own on a PostgreSQL database, for tests that kill it
 * mid-batch (SIGKILL) and check another process takes over:
 *   node test/support/batchWorker.ts <postgres url> <owner> <chunk size> <lease ms>
 * Prints "generating" once its generator runs.
 */
import { PostgresStore } from '../../server/db/postgresStore.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { nodeServices } from './nodeStores.ts';

const [url, owner, chunkSize, leaseMs] = process.argv.slice(2);
if (!url || !owner || !chunkSize || !leaseMs) throw new Error('usage: batchWorker.ts <url> <owner> <chunk size> <lease ms>');
const store = await PostgresStore.open(url, { poolSize: 2, applicationName: `batch-worker-${owner}` });
const { generator } = nodeServices(store, systemClock, { generator: { owner, chunkSize: Number(chunkSize), leaseMs: Number(leaseMs) } });
generator.start();
console.log('generating');
