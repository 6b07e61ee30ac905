/**
 * 500-node batch ready time (issue 19, "Performance"), on SQLite and on PostgreSQL in the same
 * run, through the real `waymark serve` on loopback: POST /v1/batches (500 redirect nodes) until
 * GET /v1/batches/{id} says `ready` (polled every 5 ms), BENCH_BATCHES times (default 3), each
 * checked to hold 500 nodes with distinct serials. Baselines on the same instance: the same 500 nodes
 * made with 500 sequential POST /v1/nodes (what a client does without batches), and 500 node
 * rows written with one set-based INSERT in one transaction (the storage floor, no slugs minted,
 * no manifest).
 *
 *   node test/bench/batch-ready.ts   (WAYMARK_TEST_DATABASE for the PostgreSQL rows)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Backend, backends, bulk, machineLoad, openInstance, seedNodes } from './_instance.ts';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 3);
const QUANTITY = 500;

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(backend: Backend): Promise<void> {
  const instance = await openInstance(backend);
  try {
    const { orgId, key } = await instance.organization('Batches');
    const server = await instance.serve();
    const ready: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const t = performance.now();
      const created = (await call(server.url, key, 'POST', '/v1/batches', { label: `Bench ${b}`, prefix: `B${b}`, quantity: QUANTITY, function_type: 'redirect', base_payload: { url: 'https://example.com/fair' } })).body as { data: { id: string } };
      for (;;) {
        const batch = (await call(server.url, key, 'GET', `/v1/batches/${created.data.id}`)).body as { data: { status: string; nodes_generated: number; failure_reason: string | null } };
        if (batch.data.status === 'ready') break;
        if (batch.data.status === 'failed') throw new Error(`batch failed: ${batch.data.failure_reason}`);
        await sleep(5);
      }
      ready.push(performance.now() - t);
      const nodes = (await call(server.url, key, 'GET', `/v1/nodes?batch_id=${created.data.id}&limit=100&offset=400`)).body as { data: Array<{ serial: string }>; total: number };
      if (nodes.total !== QUANTITY || nodes.data.length !== 100 || new Set(nodes.data.map((n) => n.serial)).size !== 100) {
        throw new Error(`batch ${b}: ${nodes.total} nodes, last serial ${nodes.data.at(-1)?.serial}`);
      }
    }
    // Baseline 1: the same 500 nodes one POST at a time.
    let t = performance.now();
    for (let i = 0; i < QUANTITY; i++) await call(server.url, key, 'POST', '/v1/nodes', { label: `Single ${i}`, function_type: 'redirect', payload: { url: 'https://example.com/fair' } });
    const singles = performance.now() - t;
    await server.stop();
    // Baseline 2: 500 node rows in one set-based INSERT, one transaction (the storage floor).
    t = performance.now();
    await bulk(instance, (tx) => seedNodes(instance, tx, orgId, QUANTITY, { kind: 3, prefix: 'F', createdFrom: Date.now() }));
    const floor = performance.now() - t;
    console.log(`${backend} (${await machineLoad()}):`);
    console.log(`  500-node batch, POST until ready: median ${median(ready).toFixed(0)} ms of ${BATCHES} (${ready.map((x) => x.toFixed(0)).join(', ')} ms)`);
    console.log(`  baseline, 500 × POST /v1/nodes:   ${singles.toFixed(0)} ms (${(singles / median(ready)).toFixed(1)}× the batch's time)`);
    console.log(`  floor, 500 rows in one INSERT:    ${floor.toFixed(0)} ms (nodes + slugs, capture off)`);
  } finally {
    await instance.close();
  }
}

console.log(`batch-ready: ${BATCHES} batches of ${QUANTITY} redirect nodes per backend`);
for (const backend of backends()) await measure(backend);
