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
      handler: ({ body, auth }) => {
        const { webhook, secret } = webhooks.create(auth.orgId, body);
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
      handler: ({ query, auth }) => {
        const { rows, total } = webhooks.list(auth.orgId, query.limit, query.offset);
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
      handler: ({ params, auth }) => ({ data: webhooks.toApi(webhooks.get(auth.orgId, params.id)) }),
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
      handler: ({ params, body, auth }) => ({ data: webhooks.toApi(webhooks.update(auth.orgId, params.id, body)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint and its delivery queue',
      tags: ['Webhooks'],
      params: WebhookIdParams,
      responses: { 200: { description: 'Deleted', schema: Deleted.extend({ id: Webhook.shape.id }) }, 404: notFound },
      handler: ({ params, auth }) => {
        webhooks.remove(auth.orgId, params.id);
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
      handler: ({ params, auth }) => {
        const { webhook, secret } = webhooks.rotateSecret(auth.orgId, params.id);
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
      handler: ({ params, auth }) => ({ status: 202, data: webhooks.deliveryToApi(webhooks.sendTest(auth.orgId, params.id)) }),
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
      handler: ({ params, query, auth }) => {
        const { rows, total } = webhooks.listDeliveries(auth.orgId, params.id, query);
        return { data: rows.map((d) => webhooks.deliveryToApi(d)), total };
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
      handler: ({ params, auth }) => ({ data: webhooks.deliveryToApi(webhooks.getDelivery(auth.orgId, params.id, params.deliveryId)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver',
      operationId: 'redeliverWebhookDelivery',
      summary: 'Send a delivery again now (same webhook-id, fresh retry schedule)',
      tags: ['Webhooks'],
      params: DeliveryParams,
      responses: { 202: { description: 'Queued', schema: Delivery }, 404: { description: 'Webhook not found / Delivery not found' } },
      handler: ({ params, auth }) => ({
        status: 202,
        data: webhooks.deliveryToApi(webhooks.redeliver(auth.orgId, params.id, params.deliveryId)),
      }),
    }),
  ];
}
