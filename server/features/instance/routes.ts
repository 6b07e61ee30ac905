import { resolve } from 'node:path';
import type { AppConfig } from '../../config.ts';
import { defineRoute } from '../../http/route.ts';
import { Instance, type InstanceT } from '../../schemas/instance.ts';
import type { KeyService } from '../keys/index.ts';
import type { OrganizationService } from '../organization/index.ts';

/** GET /v1/instance: version, addresses and data directory for the console's About screen. */
export function instanceRoutes(config: AppConfig, keys: KeyService, organizations: OrganizationService) {
  return [
    defineRoute({
      method: 'get',
      path: '/instance',
      operationId: 'getInstance',
      summary: 'About this instance: version, server URL, scan base, organization, the calling key (and the data directory, for an instance-admin key)',
      tags: ['Instance'],
      responses: { 200: { description: 'The instance', schema: Instance } },
      handler: async ({ auth, apiBase }) => {
        const org = await keys.organization(auth.orgId);
        const data: InstanceT = {
          version: config.version,
          server_url: apiBase.replace(/\/v1$/, ''),
          api_base: apiBase,
          // The organization's own scan domain when it set one (GET /v1/organization says which).
          scan_base: await organizations.scanBase(auth.orgId),
          // Where the data lives on this machine is the operator's business, not every tenant's.
          ...(auth.admin ? { data_dir: config.dataDir ? resolve(config.dataDir) : '' } : {}),
          organization: { id: auth.orgId, name: org?.name ?? '' },
          key: { id: auth.keyId, plan: auth.plan, admin: auth.admin },
        };
        return { data };
      },
    }),
  ];
}
