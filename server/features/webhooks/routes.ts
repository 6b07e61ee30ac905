import { defineRoute } from '../../http/route.ts';
import { Deleted } from '../../schemas/common.ts';
import {
  CreateWebhookBody,
  Delivery,
  DeliveryParams,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  SecretRotated,
  UpdateWebhookBody,
  Webhook,
  WebhookCreated,
  WebhookIdParams,
} from '../../schemas/webhooks.ts';
import type { WebhookService } from './service.ts';

const notFound = { description: 'Webhook not found' };

export function webhookRoutes(webhooks: WebhookService) {
  return [
    defineRoute({
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Register a webhook endpoint (the signing secret is returned only here)',
      tags: ['Webhooks'],
      body: CreateWebhookBody,
      bodyExample: { url: 'https://hooks.example.com/waymark', events: ['node.scanned', 'batch.completed'], description: 'Analytics pipeline' },
      responses: { 201: { description: 'Created', schema: WebhookCreated } },
      handler: async ({ body, auth }) => {
        const { webhook, secret } = await webhooks.create(auth.orgId, body);
        return { status: 201, data: { ...webhooks.toApi(webhook), secret } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints (newest first)',
      tags: ['Webhooks'],
      query: ListWebhooksQuery,
      responses: { 200: { description: 'Webhooks', schema: Webhook, list: true } },
      handler: async ({ query, auth }) => {
        const { rows, total } = await webhooks.list(auth.orgId, query.limit, query.offset);
        return { data: rows.map((w) => webhooks.toApi(w)), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'Get a webhook endpoint',
      tags: ['Webhooks'],
      params: WebhookIdParams,
      responses: { 200: { description: 'The webhook', schema: Webhook }, 404: notFound },
      handler: async ({ params, auth }) => ({ data: webhooks.toApi(await webhooks.get(auth.orgId, params.id)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Update a webhook endpoint (active=true re-enables a disabled one)',
      tags: ['Webhooks'],
      params: WebhookIdParams,
      body: UpdateWebhookBody,
      responses: { 200: { description: 'Updated', schema: Webhook }, 404: notFound },
      handler: async ({ params, body, auth }) => ({ data: webhooks.toApi(await webhooks.update(auth.orgId, params.id, body)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint and its delivery queue',
      tags: ['Webhooks'],
      params: WebhookIdParams,
      responses: { 200: { description: 'Deleted', schema: Deleted.extend({ id: Webhook.shape.id }) }, 404: notFound },
      handler: async ({ params, auth }) => {
        await webhooks.remove(auth.orgId, params.id);
        return { data: { deleted: true, id: params.id } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret (the old one keeps signing alongside for 24 hours)',
      tags: ['Webhooks'],
      params: WebhookIdParams,
      responses: { 200: { description: 'The new secret, shown only here', schema: SecretRotated }, 404: notFound },
      handler: async ({ params, auth }) => {
        const { webhook, secret } = await webhooks.rotateSecret(auth.orgId, params.id);
        return { data: { id: webhook.id, secret, previous_secret_expires_at: webhook.previous_secret_expires_at } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{id}/test',
      operationId: 'testWebhook',
      summary: 'Send a webhook.test event to this endpoint',
      tags: ['Webhooks'],
      params: WebhookIdParams,
      responses: {
        202: { description: 'Queued; the delivery is sent at once', schema: Delivery },
        404: notFound,
        409: { description: 'Webhook is not active' },
      },
      handler: async ({ params, auth }) => ({ status: 202, data: await webhooks.deliveryToApi(await webhooks.sendTest(auth.orgId, params.id)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'List deliveries with their attempts (newest first)',
      tags: ['Webhooks'],
      params: WebhookIdParams,
      query: ListDeliveriesQuery,
      responses: { 200: { description: 'Deliveries', schema: Delivery, list: true }, 404: notFound },
      handler: async ({ params, query, auth }) => {
        const { rows, total } = await webhooks.listDeliveries(auth.orgId, params.id, query);
        return { data: await Promise.all(rows.map((d) => webhooks.deliveryToApi(d))), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}/deliveries/{deliveryId}',
      operationId: 'getWebhookDelivery',
      summary: 'Get one delivery with its attempts',
      tags: ['Webhooks'],
      params: DeliveryParams,
      responses: { 200: { description: 'The delivery', schema: Delivery }, 404: { description: 'Webhook not found / Delivery not found' } },
      handler: async ({ params, auth }) => ({ data: await webhooks.deliveryToApi(await webhooks.getDelivery(auth.orgId, params.id, params.deliveryId)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver',
      operationId: 'redeliverWebhookDelivery',
      summary: 'Send a delivery again now (same webhook-id, fresh retry schedule)',
      tags: ['Webhooks'],
      params: DeliveryParams,
      responses: { 202: { description: 'Queued', schema: Delivery }, 404: { description: 'Webhook not found / Delivery not found' } },
      handler: async ({ params, auth }) => ({
        status: 202,
        data: await webhooks.deliveryToApi(await webhooks.redeliver(auth.orgId, params.id, params.deliveryId)),
      }),
    }),
  ];
}
