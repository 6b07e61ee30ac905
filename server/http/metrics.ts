import type { Express } from 'express';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Executor } from '../db/store.ts';
import { MetricsRepo } from './metricsRepo.ts';

/**
 * Prometheus metrics at /metrics, one registry per app (no global state). Gauges read the
 * database when scraped (metricsRepo.ts); features add their own through `registry`.
 */
export function createMetrics(db: Executor, version: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'waymark_' });
  const repo = new MetricsRepo();

  new Gauge({ name: 'waymark_build_info', help: 'Waymark version', labelNames: ['version'], registers: [registry] }).set({ version }, 1);
  new Gauge({
    name: 'waymark_nodes',
    help: 'Nodes stored',
    registers: [registry],
    async collect() {
      this.set(await repo.nodes(db));
    },
  });
  new Gauge({
    name: 'waymark_batches',
    help: 'Batches by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const rows = await repo.batchesByStatus(db);
      this.reset();
      for (const row of rows) this.set({ status: row.status }, row.n);
    },
  });
  new Gauge({
    name: 'waymark_outbox_events_total',
    help: 'Events ever recorded in the outbox',
    registers: [registry],
    async collect() {
      this.set(await repo.outboxEvents(db));
    },
  });
  return registry;
}

export function mountMetrics(app: Express, registry: Registry): void {
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
}
