import { z } from 'zod';
import { PLANS, oneOf, pagination, text, timestamp } from './common.ts';

export const ListApiKeysQuery = z.strictObject({ ...pagination });

export const CreateApiKeyBody = z
  .strictObject({
    name: text(100),
    plan: oneOf(PLANS).optional().meta({ description: 'Defaults to developer.' }),
  })
  .meta({ id: 'CreateApiKeyBody' });

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    plan: oneOf(PLANS),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKeyT = z.infer<typeof ApiKey>;

export const ApiKeyCreated = ApiKey.extend({
  api_key: z.string().meta({ description: 'The key itself. Shown only in this response.' }),
}).meta({ id: 'ApiKeyCreated' });
