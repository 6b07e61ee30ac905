import type { Database } from 'better-sqlite3';
import type { Express } from 'express';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics at /metrics, one registry per app (no global state). Gauges read the
 * database when scraped; features add their own through `registry`.
 */
export function createMetrics(db: Database, version: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'waymark_' });
  const count = (sql: string) => db.prepare(sql).pluck();
  const nodes = count('SELECT COUNT(*) FROM nodes');
  const batchesByStatus = db.prepare('SELECT status, COUNT(*) AS n FROM batches GROUP BY status');
  const outbox = count('SELECT COALESCE(MAX(seq), 0) FROM outbox_events');

  new Gauge({ name: 'waymark_build_info', help: 'Waymark version', labelNames: ['version'], registers: [registry] }).set({ version }, 1);
  new Gauge({
    name: 'waymark_nodes',
    help: 'Nodes stored',
    registers: [registry],
    collect() {
      this.set(nodes.get() as number);
    },
  });
  new Gauge({
    name: 'waymark_batches',
    help: 'Batches by status',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const row of batchesByStatus.all() as Array<{ status: string; n: number }>) this.set({ status: row.status }, row.n);
    },
  });
  new Gauge({
    name: 'waymark_outbox_events_total',
    help: 'Events ever recorded in the outbox',
    registers: [registry],
    collect() {
      this.set(outbox.get() as number);
    },
  });
  return registry;
}

export function mountMetrics(app: Express, registry: Registry): void {
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
}
