import { openEventStream } from '../../http/eventStream.ts';
import { defineRoute } from '../../http/route.ts';
import { NotFoundError } from '../../platform/errors.ts';
import {
  SerialsBody,
  SerialsGranted,
  ChangesPage,
  ChangesQuery,
  PushBody,
  PushResult,
  SyncConflict,
  LeaseBody,
  LeaseGranted,
  RegisterSiteBody,
  SiteRegistered,
  SiteSummary,
  SlugsVerified,
  SyncStatus,
  VerifySlugsBody,
} from '../../schemas/sync.ts';
import { z } from 'zod';
import type { RemoteChanges } from './changes.ts';
import type { Pairing } from './pairing.ts';
import { pairingRoutes } from './pairingRoutes.ts';
import type { LeaseRegistry } from './registry.ts';
import type { SiteSync } from './site.ts';
import type { SyncWorker } from './worker.ts';

const tags = ['Sync'];

export function syncRoutes(deps: { registry: LeaseRegistry; remoteChanges: RemoteChanges; site: SiteSync; worker: Pick<SyncWorker, 'runNow'>; pairing: Pairing; statusCheckMs?: number }) {
  const { registry, remoteChanges, site, worker } = deps;
  // How often /sync/events compares the status with what it last sent.
  const statusCheckMs = deps.statusCheckMs ?? 2000;
  return [
    ...pairingRoutes(deps),
    defineRoute({
      method: 'post',
      path: '/sync/push',
      operationId: 'pushSyncChanges',
      summary: 'Remote side: apply a site\'s changes (idempotent by seq, in order, one transaction) and its scans',
      tags,
      body: PushBody,
      bodyLimit: '8mb',
      responses: {
        200: { description: 'Applied up to acked_seq (conflicting changes are logged and acknowledged too)', schema: PushResult },
        409: {
          description:
            'Push gap (details.expected_seq: resend the changes after it), a clock more than 5 minutes ahead, a stale fencing token or an unknown incarnation',
        },
      },
      handler: async ({ body, auth }) => ({ data: await remoteChanges.push(auth.orgId, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sync/changes',
      operationId: 'listSyncChanges',
      summary: 'Remote side: the change feed of the key\'s organization after an opaque cursor, without the asking writer\'s own changes',
      tags,
      query: ChangesQuery,
      responses: { 200: { description: 'A page of changes', schema: ChangesPage } },
      handler: async ({ query, auth }) => ({
        data: await remoteChanges.changes(auth.orgId, `${query.site_id}/${query.incarnation}`, query.cursor, query.limit),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/sync/conflicts',
      operationId: 'listSyncConflicts',
      summary: 'Conflicts sync found on this instance (block conflicts, edits after a delete, refused slugs, serial clashes)',
      tags,
      responses: { 200: { description: 'Conflicts, oldest first', schema: SyncConflict, list: true } },
      handler: async ({ auth }) => {
        const list = await site.conflicts(auth.orgId);
        return { data: list, total: list.length };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sync/conflicts/{id}/resolve',
      operationId: 'resolveSyncConflict',
      summary: 'Mark a conflict as seen: it leaves the status (it stays in GET /sync/conflicts with resolved_at)',
      tags,
      params: z.strictObject({ id: z.coerce.number().int().min(1) }),
      responses: {
        200: { description: 'The conflict', schema: SyncConflict },
        404: { description: 'No such conflict' },
        422: { description: 'The id is not a positive whole number' },
      },
      handler: async ({ params, auth }) => {
        const c = await site.resolveConflict(auth.orgId, params.id);
        if (!c) throw new NotFoundError('Conflict not found');
        return { data: c };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sync/sites',
      operationId: 'registerSyncSite',
      summary: 'Remote side: register a site (or a new incarnation of one) with the key\'s organization, claiming the blocks it took before pairing',
      tags,
      body: RegisterSiteBody,
      responses: {
        200: { description: 'Registered (idempotent: a retried call gets the same answer)', schema: SiteRegistered },
        409: { description: 'Site id of another organization, or a stale fencing token (forked copy of the site data)' },
      },
      handler: async ({ body, auth }) => ({ data: await registry.register(auth.orgId, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sync/sites',
      operationId: 'listSyncSites',
      summary: 'Remote side: sites registered for this organization, their incarnations and leased blocks',
      tags,
      responses: { 200: { description: 'Sites', schema: SiteSummary, list: true } },
      handler: async ({ auth }) => {
        const sites = await registry.sites(auth.orgId);
        return { data: sites, total: sites.length };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sync/leases',
      operationId: 'leaseSlugBlocks',
      summary: 'Remote side: lease more slug blocks to a registered site incarnation',
      tags,
      body: LeaseBody,
      responses: {
        200: { description: 'Blocks granted (a retried call gets the same blocks)', schema: LeaseGranted },
        409: { description: 'Unknown site or incarnation (pair again as a new incarnation), or a stale fencing token (forked copy of the site data)' },
      },
      handler: async ({ body, auth }) => ({ data: await registry.lease(auth.orgId, body) }),
    }),
    defineRoute({
      method: 'post',
      path: '/sync/serials',
      operationId: 'reserveSyncSerials',
      summary: 'Remote side: reserve batch serial numbers for a prefix (a site online numbers its batches with these)',
      tags,
      body: SerialsBody,
      responses: { 200: { description: 'The first of the reserved numbers', schema: SerialsGranted } },
      handler: async ({ body, auth }) => {
        if (!remoteChanges.serialRanges) throw new Error('Batch serials are not wired');
        return { data: await remoteChanges.serialRanges.grant(auth.orgId, body) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sync/slugs/verify',
      operationId: 'verifySyncSlugs',
      summary: 'Remote side: check that slugs lie in blocks leased to a site (push refuses any that do not)',
      tags,
      body: VerifySlugsBody,
      responses: { 200: { description: 'Accepted and rejected slugs', schema: SlugsVerified } },
      handler: async ({ body, auth }) => {
        const accepted: string[] = [];
        const rejected: Array<{ slug: string; reason: 'malformed' | 'not_leased' | 'leased_to_other_site' }> = [];
        for (const slug of body.slugs) {
          const check = await registry.validateSlug(auth.orgId, body.site_id, slug);
          if (check.ok) accepted.push(slug);
          else rejected.push({ slug, reason: check.reason });
        }
        return { data: { accepted, rejected } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/sync/status',
      operationId: 'getSyncStatus',
      summary:
        'Sync state of this instance: pairing, reachability, slug reserve, changes not yet pushed, unresolved conflicts.',
      tags,
      responses: { 200: { description: 'Status', schema: SyncStatus } },
      handler: async ({ auth }) => ({ data: await site.status(auth.orgId) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sync/events',
      operationId: 'streamSyncEvents',
      summary:
        'Server-sent events for the console: `status` (as GET /sync/status) now and whenever it changes, instead of polling. The server checks every 2 s; a comment every 15 s keeps the stream open.',
      tags,
      responses: { 200: { description: 'An event stream of `status` events', content: { 'text/event-stream': { schema: z.string() } } } },
      handler: ({ auth, res }) => {
        const stream = openEventStream(res);
        let last = '';
        const push = async () => {
          const status = await site.status(auth.orgId);
          const json = JSON.stringify(status);
          if (json === last) return;
          last = json;
          stream.send('status', status);
        };
        void push().catch(() => undefined);
        const timer = setInterval(() => void push().catch(() => undefined), statusCheckMs);
        stream.onClose(() => clearInterval(timer));
        return undefined;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sync/run',
      operationId: 'runSync',
      summary: 'Sync now (ignores back-off), then answer the status',
      tags,
      responses: { 200: { description: 'Status after the round', schema: SyncStatus } },
      handler: async ({ auth }) => {
        await worker.runNow();
        return { data: await site.status(auth.orgId) };
      },
    }),
  ];
}
