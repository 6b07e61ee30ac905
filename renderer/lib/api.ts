// The console's typed HTTP client. Requests and responses use the zod schemas the server itself
// uses (server/schemas/), so a shape mismatch shows up as a clear error rather than a blank screen.
import { z } from 'zod';
import { ApiKey, ApiKeyCreated, type CreateApiKeyBody } from '../../server/schemas/apiKeys.ts';
import { Batch, type CreateBatchBody, Manifest, type UpdateBatchBody } from '../../server/schemas/batches.ts';
import type { BatchStatus, FunctionType, NodeStatus } from '../../server/schemas/common.ts';
import { Instance } from '../../server/schemas/instance.ts';
import { Organization } from '../../server/schemas/organization.ts';
import { type CreateNodeBody, Node, NodeCreated, NodeDeleted, NodeUpdated, type UpdateNodeBody } from '../../server/schemas/nodes.ts';
import { type CreateRuleBody, Rule, type UpdateRuleBody } from '../../server/schemas/rules.ts';
import { type CreateTemplateBody, Template, type UpdateTemplateBody } from '../../server/schemas/templates.ts';
import {
  type CreateWebhookBody,
  Delivery,
  SecretRotated,
  type UpdateWebhookBody,
  WEBHOOK_EVENT_TYPES,
  Webhook,
  WebhookCreated,
} from '../../server/schemas/webhooks.ts';
import { type Interval, NodeAnalytics, OrgAnalytics, ScanEvent } from '../../server/schemas/analytics.ts';
import { ImportReport } from '../../server/schemas/nodeImport.ts';
import { LayoutInfo } from '../../server/schemas/printing.ts';
import { NfcStatusSchema, SessionSchema, TagWrittenSchema } from '../../server/schemas/nfc.ts';
import { type TapProofPolicy, TapProofSettings } from '../../server/schemas/tapProofs.ts';
import { SyncStatus } from '../../server/schemas/sync.ts';
import type { PairInput } from '../../server/schemas/syncPairing.ts';
import { noteBudget } from './rateBudget.ts';
import { useSession } from './session.ts';

export type CreateNodeInput = z.input<typeof CreateNodeBody>;
export type UpdateNodeInput = z.input<typeof UpdateNodeBody>;
export type CreateRuleInput = z.input<typeof CreateRuleBody>;
export type UpdateRuleInput = z.input<typeof UpdateRuleBody>;
export type CreateBatchInput = z.input<typeof CreateBatchBody>;
export type UpdateBatchInput = z.input<typeof UpdateBatchBody>;
export type CreateTemplateInput = z.input<typeof CreateTemplateBody>;
export type UpdateTemplateInput = z.input<typeof UpdateTemplateBody>;
export type CreateApiKeyInput = z.input<typeof CreateApiKeyBody>;

/** An error answer of the API (`{data: null, error, details?}`) or a transport failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly details: Record<string, string>;
  readonly retryAfter: number | null;

  constructor(status: number, message: string, details: Record<string, string> = {}, retryAfter: number | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.details = details;
    this.retryAfter = retryAfter;
  }

  /** The endpoint does not exist on this server (a feature not installed yet). */
  get isMissingEndpoint(): boolean {
    return this.status === 404 && this.message === 'Not found';
  }
}

type QueryValue = string | number | boolean | undefined | null;
interface CallOptions {
  /** Use this key instead of the session's (checking a key before signing in with it). */
  key?: string;
  body?: unknown;
  /** A body sent as is (a CSV or JSON file the user chose), instead of `body` encoded as JSON. */
  raw?: { contentType: string; text: string };
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
}

const ErrorShape = z.object({ error: z.string(), details: z.record(z.string(), z.string()).optional() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function buildUrl(path: string, query?: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `/v1${path}${qs ? `?${qs}` : ''}`;
}

/** One HTTP call with the session's key; retries a rate-limited GET (bounded) after Retry-After. */
export async function send(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const key = options.key ?? useSession.getState().key;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.raw !== undefined) {
    headers['content-type'] = options.raw.contentType;
    body = options.raw.text;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(buildUrl(path, options.query), {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch (err) {
      if (err instanceof DOMException && err.name === 'AbortError') throw err;
      throw new ApiError(0, 'Cannot reach the Waymark server. Check that it is running and reachable.');
    }
    noteBudget(res.headers);
    if (res.ok) return res;
    const retryAfter = Number(res.headers.get('retry-after')) || null;
    if (res.status === 429 && method === 'GET' && attempt < 2 && retryAfter !== null && retryAfter <= 10) {
      await sleep(retryAfter * 1000 + Math.random() * 500);
      continue;
    }
    let message = `${res.status} ${res.statusText}`;
    let details: Record<string, string> = {};
    try {
      const parsed = ErrorShape.safeParse(await res.json());
      if (parsed.success) {
        message = parsed.data.error;
        details = parsed.data.details ?? {};
      }
    } catch {
      // not JSON: keep the status line
    }
    if (res.status === 401 && options.key === undefined) useSession.getState().signOut('The server did not accept the API key (revoked or mistyped). Sign in again.');
    throw new ApiError(res.status, message, details, retryAfter);
  }
}

function check<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    console.error(`Unexpected ${what}`, result.error.issues);
    throw new ApiError(0, `Unexpected response from the server (${what}).`);
  }
  return result.data;
}

async function one<S extends z.ZodType>(method: string, path: string, schema: S, options?: CallOptions): Promise<z.infer<S>> {
  const res = await send(method, path, options);
  const body = (await res.json()) as { data?: unknown };
  return check(schema, body.data, `${method} ${path}`);
}

export interface Page<T> {
  data: T[];
  total: number;
}

async function many<S extends z.ZodType>(path: string, schema: S, options?: CallOptions): Promise<Page<z.infer<S>>> {
  const res = await send('GET', path, options);
  const body = (await res.json()) as { data?: unknown; total?: unknown };
  const data = check(z.array(schema), body.data, `GET ${path}`);
  return { data, total: typeof body.total === 'number' ? body.total : data.length };
}

/** Every item of a paged list, 100 per call (for short lists the console shows whole, e.g. a node's rules). */
async function every<S extends z.ZodType>(path: string, schema: S): Promise<Page<z.infer<S>>> {
  const data: Array<z.infer<S>> = [];
  for (;;) {
    const page = await many(path, schema, { query: { limit: 100, offset: data.length } });
    data.push(...page.data);
    if (page.data.length === 0 || data.length >= page.total) return { data, total: page.total };
  }
}

async function blob(path: string, query?: Record<string, QueryValue>): Promise<Blob> {
  const res = await send('GET', path, query ? { query } : {});
  return res.blob();
}

const enc = encodeURIComponent;

export type NodeT = z.infer<typeof Node>;
export type RuleT = z.infer<typeof Rule>;
export type BatchT = z.infer<typeof Batch>;
export type TemplateT = z.infer<typeof Template>;
export type ApiKeyT = z.infer<typeof ApiKey>;
export type InstanceT = z.infer<typeof Instance>;
export type ManifestT = z.infer<typeof Manifest>;

export interface NodeQuery {
  status?: NodeStatus | undefined;
  function_type?: FunctionType | undefined;
  batch_id?: string | undefined;
  q?: string | undefined;
  limit?: number;
  offset?: number;
}

/** A file of nodes to import: its text and whether it is CSV or JSON. */
export interface NodesFile {
  text: string;
  format: 'csv' | 'json';
}
export type ImportReportT = z.infer<typeof ImportReport>;

export type ScanEventT = z.infer<typeof ScanEvent>;
export type NodeAnalyticsT = z.infer<typeof NodeAnalytics>;
export type OrgAnalyticsT = z.infer<typeof OrgAnalytics>;

export type WebhookT = z.infer<typeof Webhook>;
export type WebhookCreatedT = z.infer<typeof WebhookCreated>;
export type DeliveryT = z.infer<typeof Delivery>;
export type CreateWebhookInput = z.input<typeof CreateWebhookBody>;
export type UpdateWebhookInput = z.input<typeof UpdateWebhookBody>;
export { WEBHOOK_EVENT_TYPES };

export const api = {
  instance: () => one('GET', '/instance', Instance),
  /** Checks a key (GET /v1/instance with it) without signing in. */
  checkKey: (key: string) => one('GET', '/instance', Instance, { key }),

  organization: {
    get: () => one('GET', '/organization', Organization),
    /** Sets the scan domain (null: back to the instance default). */
    setScanBase: (scan_base: string | null) => one('PATCH', '/organization', Organization, { body: { scan_base } }),
  },

  nodes: {
    list: (query: NodeQuery, signal?: AbortSignal) =>
      many('/nodes', Node, { query: { ...query }, ...(signal ? { signal } : {}) }),
    get: (slug: string) => one('GET', `/nodes/${enc(slug)}`, Node),
    create: (body: CreateNodeInput) => one('POST', '/nodes', NodeCreated, { body }),
    update: (slug: string, body: UpdateNodeInput) => one('PATCH', `/nodes/${enc(slug)}`, NodeUpdated, { body }),
    remove: (slug: string) => one('DELETE', `/nodes/${enc(slug)}`, NodeDeleted),
    reportLost: (slug: string) => one('POST', `/nodes/${enc(slug)}/lost`, Node),
    qr: (slug: string, format: 'svg' | 'png') => blob(`/nodes/${enc(slug)}/qr`, { format }),
    scans: (slug: string, limit: number, offset: number) => many(`/nodes/${enc(slug)}/scans`, ScanEvent, { query: { limit, offset } }),
    scansCsv: (slug: string) => blob(`/nodes/${enc(slug)}/scans`, { format: 'csv' }),
    /** Every node of the organization as a file the import reads back (docs/api.md, "Import and export"). */
    exportFile: (format: 'csv' | 'json') => blob('/nodes/export', { format }),
    /** Imports a CSV or JSON file as is; `dryRun` answers the report without writing. */
    importFile: (file: NodesFile, options: { mode: 'all' | 'partial'; dryRun: boolean }) =>
      one('POST', '/nodes/import', ImportReport, {
        raw: { contentType: file.format === 'csv' ? 'text/csv' : 'application/json', text: file.text },
        query: { mode: options.mode, dry_run: options.dryRun ? 'true' : undefined },
      }),
    analytics: (slug: string, query: { from?: string; to?: string; interval: Interval }) =>
      one('GET', `/nodes/${enc(slug)}/analytics`, NodeAnalytics, { query }),
    /** What a tag URL without a valid tap proof gets, and the tags registered for the node (docs/scans.md). */
    tapProof: (slug: string) => one('GET', `/nodes/${enc(slug)}/tap-proof`, TapProofSettings),
    setTapProofPolicy: (slug: string, policy: TapProofPolicy) => one('PUT', `/nodes/${enc(slug)}/tap-proof`, TapProofSettings, { body: { policy } }),
  },

  /** Organization-wide scan analytics (human scans only) with the `top` most scanned nodes. */
  analytics: (query: { from?: string; to?: string; interval: Interval; top?: number }) => one('GET', '/analytics', OrgAnalytics, { query }),

  rules: {
    list: (slug: string) => every(`/nodes/${enc(slug)}/rules`, Rule),
    create: (slug: string, body: CreateRuleInput) => one('POST', `/nodes/${enc(slug)}/rules`, Rule, { body }),
    update: (slug: string, id: string, body: UpdateRuleInput) => one('PATCH', `/nodes/${enc(slug)}/rules/${enc(id)}`, Rule, { body }),
    remove: (slug: string, id: string) => send('DELETE', `/nodes/${enc(slug)}/rules/${enc(id)}`),
    /** The split variant `id` becomes the node's payload; the node's split rules are deleted. */
    promote: (slug: string, id: string) => one('POST', `/nodes/${enc(slug)}/rules/${enc(id)}/promote`, Node),
  },

  batches: {
    list: (query: { status?: BatchStatus | undefined; limit?: number; offset?: number }) => many('/batches', Batch, { query: { ...query } }),
    get: (id: string) => one('GET', `/batches/${enc(id)}`, Batch),
    create: (body: CreateBatchInput) => one('POST', '/batches', Batch, { body }),
    update: (id: string, body: UpdateBatchInput) => one('PATCH', `/batches/${enc(id)}`, Batch, { body }),
    retry: (id: string) => one('POST', `/batches/${enc(id)}/retry`, Batch),
    manifest: (id: string) => one('GET', `/batches/${enc(id)}/manifest`, Manifest),
    manifestFile: (id: string, format: 'json' | 'csv') => blob(`/batches/${enc(id)}/manifest`, format === 'csv' ? { format } : undefined),
  },

  templates: {
    list: (limit = 100, offset = 0) => many('/templates', Template, { query: { limit, offset } }),
    create: (body: CreateTemplateInput) => one('POST', '/templates', Template, { body }),
    update: (id: string, body: UpdateTemplateInput) => one('PATCH', `/templates/${enc(id)}`, Template, { body }),
    remove: (id: string) => send('DELETE', `/templates/${enc(id)}`),
  },

  keys: {
    list: () => every('/api-keys', ApiKey),
    create: (body: CreateApiKeyInput) => one('POST', '/api-keys', ApiKeyCreated, { body }),
    revoke: (id: string) => send('DELETE', `/api-keys/${enc(id)}`),
  },

  printing: {
    layouts: () => many('/layouts', LayoutInfo),
  },

  nfc: {
    status: () => one('GET', '/nfc/status', NfcStatusSchema),
    start: (body: { batch_id: string; lock?: boolean; confirm_lock?: boolean; allow_reassign?: boolean; mirror?: boolean; protect?: boolean; allow_local_scan_base?: boolean }) => one('POST', '/nfc/session', SessionSchema, { body }),
    stop: () => one('POST', '/nfc/session/stop', SessionSchema, { body: {} }),
    skip: () => one('POST', '/nfc/session/skip', SessionSchema, { body: {} }),
    redo: () => one('POST', '/nfc/session/redo', SessionSchema, { body: {} }),
    lost: () => one('POST', '/nfc/session/lost', SessionSchema, { body: {} }),
    retry: (reassign = false) => one('POST', '/nfc/session/retry', TagWrittenSchema, { body: reassign ? { reassign } : {} }),
  },

  webhooks: {
    list: () => many('/webhooks', Webhook, { query: { limit: 100 } }),
    create: (body: CreateWebhookInput) => one('POST', '/webhooks', WebhookCreated, { body }),
    update: (id: string, body: UpdateWebhookInput) => one('PATCH', `/webhooks/${enc(id)}`, Webhook, { body }),
    remove: (id: string) => send('DELETE', `/webhooks/${enc(id)}`),
    rotateSecret: (id: string) => one('POST', `/webhooks/${enc(id)}/rotate-secret`, SecretRotated),
    deliveries: (id: string) => many(`/webhooks/${enc(id)}/deliveries`, Delivery, { query: { limit: 25 } }),
    redeliver: (id: string, deliveryId: string) => one('POST', `/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/redeliver`, Delivery),
    test: (id: string) => one('POST', `/webhooks/${enc(id)}/test`, Delivery),
  },

  sync: {
    status: (signal?: AbortSignal) => one('GET', '/sync/status', SyncStatus, signal ? { signal } : {}),
    pair: (body: PairInput) => one('POST', '/sync/pair', SyncStatus, { body }),
    run: () => one('POST', '/sync/run', SyncStatus, { body: {} }),
    /** Marks a conflict resolved (the answer's shape is not needed: the status is read again). */
    resolveConflict: (id: number) => send('POST', `/sync/conflicts/${enc(String(id))}/resolve`, { body: {} }),
  },
};

export type SyncStatusT = z.infer<typeof SyncStatus>;
export type SyncConflictT = SyncStatusT['conflicts'][number];
