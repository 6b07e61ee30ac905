import { defineRoute } from '../../http/route.ts';
import { SlugParams } from '../../schemas/nodes.ts';
import { TapProofSettings, UpdateTapProofBody } from '../../schemas/tapProofs.ts';
import type { NodeService } from '../nodes/index.ts';
import type { TapProofService } from './service.ts';

/** GET/PUT /v1/nodes/{slug}/tap-proof: the node's policy for unverified tag URLs and its tags. */
export function tapProofRoutes(tapProofs: TapProofService, nodes: NodeService) {
  const settings = async (nodeId: string) => ({
    policy: await tapProofs.policy(nodeId),
    tags: (await tapProofs.tagsOfNode(nodeId)).map(({ uid, kind, key_version, last_counter }) => ({ uid, kind, key_version, last_counter })),
  });
  return [
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/tap-proof',
      operationId: 'getNodeTapProof',
      summary: "A node's tap proof policy and the tags personalised for it (no key material)",
      tags: ['NFC'],
      params: SlugParams,
      responses: { 200: { description: 'Policy and tags', schema: TapProofSettings }, 404: { description: 'Node not found' } },
      handler: async ({ params, auth }) => {
        const node = await nodes.get(auth.orgId, params.slug);
        return { data: await settings(node.id) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/nodes/{slug}/tap-proof',
      operationId: 'updateNodeTapProof',
      summary: 'Set what a tag URL without a valid proof gets: the content as usual (serve) or the "could not be verified" page (refuse)',
      tags: ['NFC'],
      params: SlugParams,
      body: UpdateTapProofBody,
      bodyExample: { policy: 'refuse' },
      responses: { 200: { description: 'Policy and tags', schema: TapProofSettings }, 404: { description: 'Node not found' } },
      handler: async ({ params, auth, body }) => {
        const node = await nodes.get(auth.orgId, params.slug);
        await tapProofs.setPolicy(auth.orgId, node.id, body.policy);
        return { data: await settings(node.id) };
      },
    }),
  ];
}
