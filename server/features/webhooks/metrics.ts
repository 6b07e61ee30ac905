import { Gauge, type Registry } from 'prom-client';
import type { WebhookService } from './service.ts';

/** Webhook gauges on the app's /metrics registry: deliveries by status, endpoints by state. */
export function registerWebhookMetrics(registry: Registry, webhooks: WebhookService): void {
  new Gauge({
    name: 'waymark_webhook_deliveries',
    help: 'Webhook deliveries by status (pending = queued or backing off)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      for (const [status, n] of Object.entries((await webhooks.stats()).deliveries)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'waymark_webhook_endpoints',
    help: 'Webhook endpoints by state (inactive = paused or disabled after failing)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      for (const [state, n] of Object.entries((await webhooks.stats()).endpoints)) this.set({ state }, n);
    },
  });
}
