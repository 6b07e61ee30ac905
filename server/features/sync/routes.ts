import { defineRoute } from '../../http/route.ts';
import {
  LeaseBody,
  LeaseGranted,
  RegisterSiteBody,
  SiteRegistered,
  SiteSummary,
  SlugsVerified,
  SyncStatus,
  VerifySlugsBody,
} from '../../schemas/sync.ts';
import type { Pairing } from './pairing.ts';
import { pairingRoutes } from './pairingRoutes.ts';
import type { LeaseRegistry } from './registry.ts';
import type { SiteSync } from './site.ts';
import type { SyncWorker } from './worker.ts';

const tags = ['Sync'];

export function syncRoutes(deps: { registry: LeaseRegistry; site: SiteSync; worker: Pick<SyncWorker, 'runNow'>; pairing: Pairing }) {
  const { registry, site, worker } = deps;
  return [
    ...pairingRoutes(deps),
    defineRoute({
      method: 'post',
      path: '/sync/sites',
      summary: 'Remote side: register a site (or a new incarnation of one) with the key\'s organization, claiming the blocks it took before pairing',
      tags,
      body: RegisterSiteBody,
      responses: {
        200: { description: 'Registered (idempotent: a retried call gets the same answer)', schema: SiteRegistered },
        409: { description: 'Site id of another organization, or a stale fencing token (forked copy of the site data)' },
      },
      handler: ({ body, auth }) => ({ data: registry.register(auth.orgId, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sync/sites',
      summary: 'Remote side: sites registered for this organization, their incarnations and leased blocks',
      tags,
      responses: { 200: { description: 'Sites', schema: SiteSummary, list: true } },
      handler: ({ auth }) => {
        const sites = registry.sites(auth.orgId);
        return { data: sites, total: sites.length };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sync/leases',
      summary: 'Remote side: lease more slug blocks to a registered site incarnation',
      tags,
      body: LeaseBody,
      responses: {
        200: { description: 'Blocks granted (a retried call gets the same blocks)', schema: LeaseGranted },
        409: { description: 'Unknown site or incarnation (pair again as a new incarnation), or a stale fencing token (forked copy of the site data)' },
      },
      handler: ({ body, auth }) => ({ data: registry.lease(auth.orgId, body) }),
    }),
    defineRoute({
      method: 'post',
      path: '/sync/slugs/verify',
      summary: 'Remote side: check that slugs lie in blocks leased to a site (push refuses any that do not)',
      tags,
      body: VerifySlugsBody,
      responses: { 200: { description: 'Accepted and rejected slugs', schema: SlugsVerified } },
      handler: ({ body, auth }) => {
        const accepted: string[] = [];
        const rejected: Array<{ slug: string; reason: 'malformed' | 'not_leased' | 'leased_to_other_site' }> = [];
        for (const slug of body.slugs) {
          const check = registry.validateSlug(auth.orgId, body.site_id, slug);
          if (check.ok) accepted.push(slug);
          else rejected.push({ slug, reason: check.reason });
        }
        return { data: { accepted, rejected } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/sync/status',
      summary:
        'Sync state of this instance: pairing, reachability, slug reserve. pending_changes is 0 and conflicts lists only block conflicts until push/pull exist.',
      tags,
      responses: { 200: { description: 'Status', schema: SyncStatus } },
      handler: () => ({ data: site.status() }),
    }),
    defineRoute({
      method: 'post',
      path: '/sync/run',
      summary: 'Sync now (ignores back-off), then answer the status',
      tags,
      responses: { 200: { description: 'Status after the round', schema: SyncStatus } },
      handler: async () => {
        await worker.runNow();
        return { data: site.status() };
      },
    }),
  ];
}
