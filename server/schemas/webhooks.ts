import { z } from 'zod';
import { httpUrl, oneOf, pagination, timestamp } from './common.ts';

/** Events an endpoint can subscribe to (docs/webhooks.md has the catalogue). */
export const WEBHOOK_EVENT_TYPES = [
  'batch.completed',
  'batch.failed',
  'node.scanned',
  'node.tap_unverified',
  'node.created',
  'node.updated',
  'node.deleted',
  'tag.written',
  'webhook.disabled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent only to the endpoint it was requested for (`POST /webhooks/{id}/test`), never subscribed to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const events = z
  .array(oneOf(WEBHOOK_EVENT_TYPES), { error: 'must be an array of event types' })
  .min(1, 'must list at least one event type')
  .max(WEBHOOK_EVENT_TYPES.length * 2, 'has too many entries');

const description = z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').nullable();

export const CreateWebhookBody = z
  .strictObject({
    url: httpUrl,
    events,
    description: description.optional(),
    active: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .meta({ id: 'CreateWebhookBody' });

export const UpdateWebhookBody = z
  .strictObject({
    url: httpUrl.optional(),
    events: events.optional(),
    description: description.optional(),
    active: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .meta({ id: 'UpdateWebhookBody' });

export const ListWebhooksQuery = z.strictObject({ ...pagination });

export const ListDeliveriesQuery = z.strictObject({
  status: oneOf(DELIVERY_STATUSES).optional(),
  ...pagination,
});

export const WebhookIdParams = z.object({ id: z.string() });
export const DeliveryParams = z.object({ id: z.string(), deliveryId: z.string() });

export const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    active: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
    failing_since: timestamp.nullable().meta({ description: 'First failed attempt of the current failing streak.' }),
    disabled: z
      .object({
        note: z.literal('webhook.disabled'),
        at: timestamp,
        reason: z.string(),
      })
      .nullable()
      .meta({ description: 'Set when the endpoint was disabled automatically; PATCH active=true re-enables it.' }),
    previous_secret_expires_at: timestamp
      .nullable()
      .meta({ description: 'After a rotation: until then deliveries are signed with the old and the new secret.' }),
  })
  .meta({ id: 'Webhook' });
export type WebhookT = z.infer<typeof Webhook>;

export const WebhookCreated = Webhook.extend({
  secret: z.string().meta({ description: 'Signing secret (whsec_…). Shown only in this response.' }),
}).meta({ id: 'WebhookCreated' });

export const SecretRotated = z
  .object({
    id: z.string(),
    secret: z.string().meta({ description: 'The new signing secret, shown only in this response.' }),
    previous_secret_expires_at: timestamp,
  })
  .meta({ id: 'WebhookSecretRotated' });

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int(),
    at: timestamp,
    status_code: z.number().int().nullable(),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    succeeded: z.boolean(),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const Delivery = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string().meta({ description: 'The webhook-id header: the same on every attempt.' }),
    event_type: z.string(),
    status: oneOf(DELIVERY_STATUSES),
    attempt_count: z.number().int(),
    next_attempt_at: timestamp.nullable(),
    last_attempt_at: timestamp.nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    completed_at: timestamp.nullable(),
    created_at: timestamp,
    attempts: z.array(DeliveryAttempt),
  })
  .meta({ id: 'WebhookDelivery' });
export type DeliveryT = z.infer<typeof Delivery>;
