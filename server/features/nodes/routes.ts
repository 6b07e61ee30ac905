import { defineRoute } from '../../http/route.ts';
import { CreateNodeBody, CreateNodeRequest, ListNodesQuery, Node, NodeCreated, NodeDeleted, NodeUpdated, SlugParams, UpdateNodeBody } from '../../schemas/nodes.ts';
import type { NodeService } from './service.ts';

const notFound = { description: 'Node not found' };

const exampleNode = {
  id: '0193a1e4-7c2a-7b1d-9f3e-2b6c8d4e5f60',
  slug: 'Z8QDXM0N',
  label: 'Front door',
  url: 'https://w.example.com/v/Z8QDXM0N',
  function_type: 'redirect',
  payload: { url: 'https://example.com/menu' },
  status: 'active',
  hardware_id: null,
  scan_count: 12,
  template_id: null,
  batch_id: null,
  serial: null,
  expires_at: null,
  max_scans: null,
  password_protected: false,
  after_limit: { type: 'gone' },
  created_at: '2026-11-21T15:04:05.123Z',
  updated_at: '2026-11-21T15:04:05.123Z',
};

export function nodeRoutes(nodes: NodeService) {
  return [
    defineRoute({
      method: 'post',
      path: '/nodes',
      operationId: 'createNode',
      summary: 'Create a node',
      tags: ['Nodes'],
      body: CreateNodeBody,
      bodyDoc: CreateNodeRequest,
      bodyExample: { label: 'Front door', function_type: 'redirect', payload: { url: 'https://example.com/menu' } },
      responses: {
        201: {
          description: 'Created',
          schema: NodeCreated,
          example: { data: { id: exampleNode.id, slug: exampleNode.slug, url: exampleNode.url, function_type: 'redirect', status: 'active' } },
        },
        409: { description: "No slugs left in this site's reserve (a paired site that has not reached its remote)" },
      },
      handler: async ({ body, auth }) => {
        const node = nodes.toApi(await nodes.create(auth.orgId, body), await nodes.scanBaseOf(auth.orgId));
        return { status: 201, data: { id: node.id, slug: node.slug, url: node.url, function_type: node.function_type, status: node.status } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes',
      operationId: 'listNodes',
      summary: 'List nodes (newest first; in serial order with batch_id)',
      tags: ['Nodes'],
      query: ListNodesQuery,
      responses: { 200: { description: 'Nodes', schema: Node, list: true, example: { data: [exampleNode], total: 1 } } },
      handler: async ({ query, auth }) => {
        const { rows, total } = await nodes.list(auth.orgId, query);
        const scanBase = await nodes.scanBaseOf(auth.orgId);
        return { data: rows.map((n) => nodes.toApi(n, scanBase)), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}',
      operationId: 'getNode',
      summary: 'Get a node',
      tags: ['Nodes'],
      params: SlugParams,
      responses: { 200: { description: 'The node', schema: Node, example: { data: exampleNode } }, 404: notFound },
      handler: async ({ params, auth }) => ({ data: nodes.toApi(await nodes.get(auth.orgId, params.slug), await nodes.scanBaseOf(auth.orgId)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/nodes/{slug}',
      operationId: 'updateNode',
      summary: 'Update a node (payload is merged as JSON Merge Patch)',
      tags: ['Nodes'],
      params: SlugParams,
      body: UpdateNodeBody,
      responses: { 200: { description: 'Updated', schema: NodeUpdated }, 404: notFound },
      handler: async ({ params, body, auth }) => {
        const n = nodes.toApi(await nodes.update(auth.orgId, params.slug, body), await nodes.scanBaseOf(auth.orgId));
        return {
          data: {
            id: n.id,
            slug: n.slug,
            label: n.label,
            url: n.url,
            function_type: n.function_type,
            payload: n.payload,
            status: n.status,
          },
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/nodes/{slug}',
      operationId: 'deleteNode',
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
      operationId: 'reportNodeLost',
      summary: 'Report a node lost (still served)',
      tags: ['Nodes'],
      params: SlugParams,
      responses: { 200: { description: 'The node', schema: Node }, 404: notFound },
      handler: async ({ params, auth }) => ({ data: nodes.toApi(await nodes.setStatus(auth.orgId, params.slug, 'lost'), await nodes.scanBaseOf(auth.orgId)) }),
    }),
  ];
}

