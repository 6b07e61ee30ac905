import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { ErrorBody } from '../schemas/common.ts';
import { INSUFFICIENT_STORAGE } from './errors.ts';
import type { AnyRouteSpec } from './route.ts';

const errorResponses = {
  '401': 'Missing or invalid API key',
  '422': 'Validation failed',
  '429': 'Rate limit exceeded',
} as const;

/** Builds /v1/openapi.json from the same route specs and zod schemas that serve the API. */
export function buildOpenApiDocument(routes: readonly AnyRouteSpec[], version: string): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      let content: Record<string, unknown> | undefined = doc.content;
      if (!content && doc.schema) {
        const body = doc.list
          ? z.object({ data: z.array(doc.schema), total: z.number().int() })
          : z.object({ data: doc.schema });
        content = { 'application/json': { schema: body } };
      }
      responses[status] = content ? { description: doc.description, content } : { description: doc.description };
    }
    for (const [status, description] of Object.entries(errorResponses)) {
      responses[status] ??= { description, content: { 'application/json': { schema: ErrorBody } } };
    }
    if (route.method !== 'get') {
      responses['507'] ??= { description: `The data volume is full: ${INSUFFICIENT_STORAGE}`, content: { 'application/json': { schema: ErrorBody } } };
    }
    const operation: Record<string, unknown> = {
      summary: route.summary,
      tags: route.tags,
      responses,
    };
    const requestParams: Record<string, unknown> = {};
    if (route.params) requestParams.path = route.params;
    if (route.query) requestParams.query = route.query;
    if (Object.keys(requestParams).length > 0) operation.requestParams = requestParams;
    if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Waymark node routing service',
      version,
      description: 'Nodes (QR/NFC touchpoints with permanent scan URLs), routing rules, batches, templates, API keys.',
    },
    servers: [{ url: '/v1' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'wmk_… API key' } } },
    security: [{ bearer: [] }],
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    paths: paths as any,
  });
}
