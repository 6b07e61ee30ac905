import { defineRoute } from '../../http/route.ts';
import { CreateNodeBody, ListNodesQuery, Node, NodeCreated, NodeDeleted, NodeUpdated, SlugParams, UpdateNodeBody } from '../../schemas/nodes.ts';
import type { NodeService } from './service.ts';

const notFound = { description: 'Node not found' };

export function nodeRoutes(nodes: NodeService) {
  return [
    defineRoute({
      method: 'post',
      path: '/nodes',
      summary: 'Create a node',
      tags: ['Nodes'],
      body: CreateNodeBody,
      responses: { 201: { description: 'Created', schema: NodeCreated } },
      handler: async ({ body, auth }) => {
        const node = nodes.toApi(await nodes.create(auth.orgId, body), await nodes.scanBaseOf(auth.orgId));
        return { status: 201, data: { id: node.id, slug: node.slug, url: node.url, function_type: node.function_type, status: node.status } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes',
      summary: 'List nodes (newest first; in serial order with batch_id)',
      tags: ['Nodes'],
      query: ListNodesQuery,
      responses: { 200: { description: 'Nodes', schema: Node, list: true } },
      handler: async ({ query, auth }) => {
        const { rows, total } = await nodes.list(auth.orgId, query);
        const scanBase = await nodes.scanBaseOf(auth.orgId);
        return { data: rows.map((n) => nodes.toApi(n, scanBase)), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}',
      summary: 'Get a node',
      tags: ['Nodes'],
      params: SlugParams,
      responses: { 200: { description: 'The node', schema: Node }, 404: notFound },
      handler: async ({ params, auth }) => ({ data: nodes.toApi(await nodes.get(auth.orgId, params.slug), await nodes.scanBaseOf(auth.orgId)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/nodes/{slug}',
      summary: 'Update a node (payload is merged as JSON Merge Patch)',
      tags: ['Nodes'],
      params: SlugParams,
      body: UpdateNodeBody,
      responses: { 200: { description: 'Updated', schema: NodeUpdated }, 404: notFound },
      handler: async ({ params, body, auth }) => {
        const n = nodes.toApi(await nodes.update(auth.orgId, params.slug, body), await nodes.scanBaseOf(auth.orgId));
        return {
          data: { id: n.id, slug: n.slug, label: n.label, url: n.url, function_type: n.function_type, payload: n.payload, status: n.status },
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/nodes/{slug}',
      summary: 'Delete a node, its rules and its analytics (the slug is never reused)',
      tags: ['Nodes'],
      params: SlugParams,
      responses: { 200: { description: 'Deleted', schema: NodeDeleted }, 404: notFound },
      handler: async ({ params, auth }) => {
        const node = await nodes.remove(auth.orgId, params.slug);
        return { data: { deleted: true, slug: node.slug } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nodes/{slug}/lost',
      summary: 'Report a node lost (still served)',
      tags: ['Nodes'],
      params: SlugParams,
      responses: { 200: { description: 'The node', schema: Node }, 404: notFound },
      handler: async ({ params, auth }) => ({ data: nodes.toApi(await nodes.setStatus(auth.orgId, params.slug, 'lost'), await nodes.scanBaseOf(auth.orgId)) }),
    }),
  ];
}

