import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { ApiKey, ApiKeyCreated, CreateApiKeyBody, ListApiKeysQuery } from '../../schemas/apiKeys.ts';
import { Deleted } from '../../schemas/common.ts';
import { IdParams } from '../../schemas/templates.ts';
import type { KeyService } from './service.ts';

export function keyRoutes(keys: KeyService) {
  return [
    defineRoute({
      method: 'get',
      path: '/api-keys',
      operationId: 'listApiKeys',
      summary: 'List the organization\'s API keys (never the keys themselves)',
      tags: ['API keys'],
      query: ListApiKeysQuery,
      responses: { 200: { description: 'Keys', schema: ApiKey, list: true } },
      handler: async ({ query, auth }) => {
        // An organization has a handful of keys: page the ordered list in memory.
        const all = await keys.list(auth.orgId);
        return { data: all.slice(query.offset, query.offset + query.limit).map((k) => keys.toApi(k)), total: all.length };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key (shown once, in this response)',
      tags: ['API keys'],
      body: CreateApiKeyBody,
      responses: { 201: { description: 'Created', schema: ApiKeyCreated } },
      handler: async ({ body, auth }) => {
        const { key, apiKey } = await keys.createKeyAs(auth, body.name, body.plan);
        return { status: 201, data: { ...keys.toApi(key), api_key: apiKey } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api-keys/{id}',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (it fails with 401 at once)',
      tags: ['API keys'],
      params: IdParams,
      responses: { 200: { description: 'Revoked', schema: Deleted.extend({ id: z.string() }) }, 404: { description: 'API key not found' } },
      handler: async ({ params, auth }) => {
        await keys.revoke(auth.orgId, params.id);
        return { data: { deleted: true, id: params.id } };
      },
    }),
  ];
}
