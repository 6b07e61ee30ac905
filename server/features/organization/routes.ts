import { defineRoute } from '../../http/route.ts';
import { Organization, UpdateOrganizationBody } from '../../schemas/organization.ts';
import type { OrganizationService } from './service.ts';

/** GET/PATCH /v1/organization: the caller's organization and its scan domain. */
export function organizationRoutes(organizations: OrganizationService) {
  return [
    defineRoute({
      method: 'get',
      path: '/organization',
      operationId: 'getOrganization',
      summary: "The caller's organization: its name and the scan domain printed on its labels and tags",
      tags: ['Organization'],
      responses: { 200: { description: 'The organization', schema: Organization } },
      handler: async ({ auth }) => ({ data: await organizations.get(auth.orgId) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/organization',
      operationId: 'updateOrganization',
      summary: 'Set the scan domain (scan_base) of the organization; null returns to the instance default',
      tags: ['Organization'],
      body: UpdateOrganizationBody,
      bodyExample: { scan_base: 'https://w.example.com' },
      responses: { 200: { description: 'The organization', schema: Organization } },
      handler: async ({ auth, body }) => ({ data: await organizations.update(auth.orgId, body) }),
    }),
  ];
}
