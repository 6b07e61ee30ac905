/**
 * Webhook delivery throughput (issue 4). In the same run:
 *   - baseline: the same signed-size JSON POSTed sequentially over one keep-alive connection
 *     to a loopback receiver (the floor for one endpoint, whose deliveries are strictly ordered);
 *   - Waymark: a burst of N node.scanned events recorded with outbox.record on a fresh SQLite
 *     database (WAL, synchronous=FULL), delivered to 1 endpoint, then to 4 endpoints at once.
 * A run counts only when every event reached every endpoint once and was accepted: per receiver,
 * `events` 2xx answers with `events` distinct webhook-ids and scan ids, and every delivery row
 * succeeded (the clock stops at the last recorded success). The baseline's answers are checked
 * the same way. Prints deliveries per second and the ratio to the baseline.
 *
 *   node test/bench/webhooks.ts          (BENCH_EVENTS, default 5000)
 */
import http from 'node:http';
import { Receiver } from '../support/receiver.ts';
import { startTestServer } from '../support/server.ts';

const events = Number(process.env.BENCH_EVENTS ?? 5000);
const sample = JSON.stringify({
  type: 'node.scanned',
  timestamp: new Date().toISOString(),
  data: { scan_id: 'x', node: { id: '6f1c3f4e-0000-4000-8000-000000000001', slug: 'KRZ4TTC6' }, device_type: 'mobile', os: 'ios', browser: 'Safari', country: 'DE', source: 'qr', rule_id: null, outcome: 'served' },
});

/** Throws unless `receiver` accepted exactly `events` requests, with distinct ids. */
function checkReceived(receiver: Receiver, what: string): void {
  const ids = new Set(receiver.accepted.map((r) => r.headers['webhook-id']));
  const scans = new Set(receiver.accepted.map((r) => (JSON.parse(r.body) as { data: { scan_id: string } }).data.scan_id));
  if (receiver.requests.length !== events || receiver.accepted.length !== events || ids.size !== events || scans.size !== events) {
    throw new Error(`${what}: ${receiver.requests.length} requests, ${receiver.accepted.length} accepted, ${ids.size} webhook-ids, ${scans.size} scan ids (expected ${events} of each)`);
  }
}

async function baseline(): Promise<number> {
  const receiver = await new Receiver().listen();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const started = performance.now();
  for (let i = 0; i < events; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = http.request(receiver.url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'webhook-id': `evt_${i}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(JSON.stringify({ ...JSON.parse(sample), data: { ...JSON.parse(sample).data, scan_id: `scan-${i}` } }));
    });
  }
  const ms = performance.now() - started;
  checkReceived(receiver, 'baseline');
  agent.destroy();
  await receiver.close();
  return ms;
}

async function waymark(endpoints: number): Promise<number> {
  const server = await startTestServer();
  const receivers = await Promise.all(Array.from({ length: endpoints }, () => new Receiver().listen()));
  for (const r of receivers) await server.running.app.services.webhooks.create(server.orgId, { url: r.url, events: ['node.scanned'] });
  const { store, db } = server.running;
  const { outbox } = server.running.app.services;
  const started = performance.now();
  await store.transaction(async (tx) => {
    for (let i = 0; i < events; i++) await outbox.record(tx, server.orgId, 'node.scanned', { ...JSON.parse(sample).data, scan_id: `scan-${i}` });
  });
  // Done when every delivery row is recorded as succeeded (each success is written after the 2xx).
  const succeeded = db.prepare("SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'").pluck();
  await Promise.all(receivers.map((r) => r.waitFor((x) => x.accepted.length >= events, 600_000, 'all deliveries')));
  while ((succeeded.get() as number) < endpoints * events) await new Promise((r) => setImmediate(r));
  const ms = performance.now() - started;
  receivers.forEach((r, i) => checkReceived(r, `endpoint ${i + 1}`));
  const rows = db.prepare('SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status').all() as Array<{ status: string; n: number }>;
  if (rows.length !== 1 || rows[0]!.status !== 'succeeded' || rows[0]!.n !== endpoints * events) throw new Error(`delivery rows: ${JSON.stringify(rows)}`);
  await server.close();
  await Promise.all(receivers.map((r) => r.close()));
  return ms;
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
const base = await baseline();
console.log(`baseline  bare keep-alive POST loop, 1 connection: ${events} requests in ${Math.round(base)} ms = ${rate(events, base)}/s`);
const one = await waymark(1);
console.log(`waymark   1 endpoint : ${events} deliveries in ${Math.round(one)} ms = ${rate(events, one)}/s (${(base / one).toFixed(2)}x baseline)`);
const four = await waymark(4);
console.log(`waymark   4 endpoints: ${4 * events} deliveries in ${Math.round(four)} ms = ${rate(4 * events, four)}/s (${((4 * events) / four / (events / base)).toFixed(2)}x baseline)`);
