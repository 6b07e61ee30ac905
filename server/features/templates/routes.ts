import { defineRoute } from '../../http/route.ts';
import { Deleted } from '../../schemas/common.ts';
import { CreateTemplateBody, CreateTemplateRequest, IdParams, ListTemplatesQuery, Template, UpdateTemplateBody } from '../../schemas/templates.ts';
import type { TemplateService } from './service.ts';

export function templateRoutes(templates: TemplateService) {
  return [
    defineRoute({
      method: 'post',
      path: '/templates',
      operationId: 'createTemplate',
      summary: 'Create a template',
      tags: ['Templates'],
      body: CreateTemplateBody,
      bodyDoc: CreateTemplateRequest,
      bodyExample: { name: 'Guest Wi-Fi', function_type: 'wifi', payload: { ssid: 'Guests', security: 'WPA2' }, locked_fields: ['ssid'] },
      responses: { 201: { description: 'Created', schema: Template } },
      handler: async ({ body, auth }) => ({ status: 201, data: templates.toApi(await templates.create(auth.orgId, body)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/templates',
      operationId: 'listTemplates',
      summary: 'List templates',
      tags: ['Templates'],
      query: ListTemplatesQuery,
      responses: { 200: { description: 'Templates', schema: Template, list: true } },
      handler: async ({ query, auth }) => {
        const { rows, total } = await templates.list(auth.orgId, query.limit, query.offset);
        return { data: rows.map((t) => templates.toApi(t)), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/templates/{id}',
      operationId: 'getTemplate',
      summary: 'Get a template',
      tags: ['Templates'],
      params: IdParams,
      responses: { 200: { description: 'The template', schema: Template }, 404: { description: 'Template not found' } },
      handler: async ({ params, auth }) => ({ data: templates.toApi(await templates.get(auth.orgId, params.id)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/templates/{id}',
      operationId: 'updateTemplate',
      summary: 'Update a template (locked-field changes reach every bound node)',
      tags: ['Templates'],
      params: IdParams,
      body: UpdateTemplateBody,
      responses: { 200: { description: 'Updated', schema: Template }, 404: { description: 'Template not found' } },
      handler: async ({ params, body, auth }) => ({ data: templates.toApi(await templates.update(auth.orgId, params.id, body)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/templates/{id}',
      operationId: 'deleteTemplate',
      summary: 'Delete a template (bound nodes keep their payload and are unbound)',
      tags: ['Templates'],
      params: IdParams,
      responses: { 200: { description: 'Deleted', schema: Deleted.extend({ id: Template.shape.id }) }, 404: { description: 'Template not found' } },
      handler: async ({ params, auth }) => {
        await templates.remove(auth.orgId, params.id);
        return { data: { deleted: true, id: params.id } };
      },
    }),
  ];
}
