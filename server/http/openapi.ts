import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { ErrorBody } from '../schemas/common.ts';
import { INSUFFICIENT_STORAGE } from './errors.ts';
import type { AnyRouteSpec, HeaderDoc, ResponseDoc } from './route.ts';

/** What each error status means wherever a route does not say more. */
const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed request URL (bad percent-encoding in the path, or a NUL character in a path parameter)',
  401: 'Missing or invalid API key',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict (the message says what to do)',
  413: 'Request body too large (64 KiB unless the operation says otherwise)',
  422: 'Validation failed: `details` maps each field path to what is wrong',
  429: 'Rate limit exceeded: retry after Retry-After seconds',
};

const BODY_400 =
  'The body is not a JSON object (malformed JSON, an empty body, `[]`, `null`, `true`, a number or a string: "Request body must be a JSON object"), it is not sent as application/json, or the URL is malformed';

const count = z.string().regex(/^[0-9]+$/);
/** A header every operation shares, as a component (`required` is part of a header object, so each variant has its own id). */
const sharedHeader = (id: string, description: string, schema: z.ZodType, required: boolean) => ({
  description,
  required,
  schema: (required ? schema : schema.optional()).meta({ description, header: { id } }),
});
const requestId = sharedHeader('X-Request-Id', 'Identifies this request in the server log', z.uuid(), true);
const retryAfter = sharedHeader('Retry-After', 'Seconds to wait before retrying', count, true);
const rateLimitHeaders = (required: boolean) => {
  const suffix = required ? '' : '-OnError';
  return {
    'X-RateLimit-Limit': sharedHeader(`X-RateLimit-Limit${suffix}`, 'Requests allowed in the current window of the budget this operation counts against', count, required),
    'X-RateLimit-Remaining': sharedHeader(`X-RateLimit-Remaining${suffix}`, 'Requests left in the current window', count, required),
    'X-RateLimit-Reset': sharedHeader(`X-RateLimit-Reset${suffix}`, 'Unix time (seconds) when the window resets', count, required),
  };
};
const rateLimitOnSuccess = rateLimitHeaders(true);
const rateLimitOnError = rateLimitHeaders(false);

/** The statuses the HTTP layer itself answers for a route, beside those its handler declares. */
function layerResponses(route: AnyRouteSpec): Record<number, ResponseDoc> {
  const hasPathParams = /\{\w+\}/.test(route.path);
  const out: Record<number, ResponseDoc> = {
    401: { description: ERROR_TEXT[401]! },
    429: { description: ERROR_TEXT[429]!, headers: { 'Retry-After': retryAfter } },
  };
  if (route.body) {
    out[400] = { description: BODY_400 };
    out[413] = { description: route.bodyLimit ? `Request body too large (limit ${route.bodyLimit})` : ERROR_TEXT[413]! };
  } else if (hasPathParams) {
    out[400] = { description: ERROR_TEXT[400]! };
  }
  // Bodies and (strict) queries are parsed with zod: unknown or bad fields are a 422.
  if (route.body || route.query) out[422] = { description: ERROR_TEXT[422]! };
  // Any write can find the data volume full (errors.ts maps that to 507); so can a read, when
  // authentication records the key's last use (at most once a minute per key).
  out[507] = { description: `The data volume is full: ${INSUFFICIENT_STORAGE}` };
  return out;
}

function headersFor(status: number, doc: ResponseDoc): z.ZodObject {
  const headers: Record<string, HeaderDoc> = {
    'X-Request-Id': requestId,
    // Set once the key is known: always on a success, on most errors (not on a 401).
    ...(status === 401 ? {} : status < 400 ? rateLimitOnSuccess : rateLimitOnError),
    ...doc.headers,
  };
  return z.object(
    Object.fromEntries(
      Object.entries(headers).map(([name, h]) => {
        if ('meta' in h.schema && h.schema.meta()?.header) return [name, h.schema]; // a shared component
        const schema = h.required === false ? h.schema.optional() : h.schema;
        return [name, schema.meta({ description: h.description })];
      }),
    ),
  );
}

function responseObject(status: number, doc: ResponseDoc): Record<string, unknown> {
  let content: Record<string, unknown> | undefined = doc.content;
  if (!content && doc.schema) {
    const body = doc.list
      ? z.object({ data: z.array(doc.schema), total: z.number().int().min(0) })
      : z.object({ data: doc.schema });
    content = { 'application/json': { schema: body, ...(doc.example !== undefined ? { example: doc.example } : {}) } };
  }
  // Every error answers the same JSON shape.
  if (!content && status >= 400) content = { 'application/json': { schema: ErrorBody } };
  return {
    description: doc.description,
    headers: headersFor(status, doc),
    ...(content ? { content } : {}),
  };
}

/** Builds /v1/openapi.json from the same route specs and zod schemas that serve the API. */
export function buildOpenApiDocument(routes: readonly AnyRouteSpec[], version: string): object {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    if (operationIds.has(route.operationId)) throw new Error(`duplicate operationId ${route.operationId}`);
    operationIds.add(route.operationId);
    const docs: Record<number, ResponseDoc> = { ...layerResponses(route), ...route.responses };
    const responses: Record<string, unknown> = {};
    for (const status of Object.keys(docs).map(Number).sort((a, b) => a - b)) {
      responses[String(status)] = responseObject(status, docs[status]!);
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      responses,
    };
    const requestParams: Record<string, unknown> = {};
    if (route.params) requestParams.path = route.params;
    if (route.query) requestParams.query = route.query;
    if (Object.keys(requestParams).length > 0) operation.requestParams = requestParams;
    if (route.body) {
      const media: Record<string, unknown> = { schema: route.bodyDoc ?? route.body };
      if (route.bodyExample !== undefined) media.example = route.bodyExample;
      const texts = Object.entries(route.textBodies ?? {}).map(([type, text]) => [type, { schema: z.string().meta({ description: text.description }) }]);
      operation.requestBody = { required: true, content: { 'application/json': media, ...Object.fromEntries(texts) } };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  const tags = [...new Set(routes.flatMap((r) => r.tags))].map((name) => ({ name }));
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Waymark node routing service',
      version,
      description:
        'Nodes (QR/NFC touchpoints with permanent scan URLs), routing rules, batches, templates, printing, webhooks, NFC, sync and API keys. Errors are `{data: null, error, details?}`; docs/api.md has the tour.',
    },
    servers: [{ url: '/v1' }],
    tags,
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'wmk_… API key' } } },
    security: [{ bearer: [] }],
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    paths: paths as any,
  });
}
