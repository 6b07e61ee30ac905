import { defineRoute } from '../../http/route.ts';
import { Deleted } from '../../schemas/common.ts';
import { Node, SlugParams } from '../../schemas/nodes.ts';
import { CreateRuleBody, CreateRuleRequest, ListRulesQuery, Rule, RuleParams, UpdateRuleBody } from '../../schemas/rules.ts';
import type { NodeService } from '../nodes/index.ts';
import type { RuleService } from './service.ts';

export function ruleRoutes(rules: RuleService, nodes: NodeService) {
  return [
    defineRoute({
      method: 'post',
      path: '/nodes/{slug}/rules',
      operationId: 'createRule',
      summary: 'Create a routing rule',
      tags: ['Routing rules'],
      params: SlugParams,
      body: CreateRuleBody,
      bodyDoc: CreateRuleRequest,
      bodyExample: { rule_type: 'geo_based', conditions: { countries: ['FR', 'BE'] }, function_type: 'redirect', payload: { url: 'https://example.com/fr' }, priority: 10 },
      responses: { 201: { description: 'Created', schema: Rule }, 404: { description: 'Node not found' } },
      handler: async ({ params, body, auth }) => ({ status: 201, data: rules.toApi(await rules.create(auth.orgId, params.slug, body)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/rules',
      operationId: 'listRules',
      summary: 'List a node\'s rules in evaluation order',
      tags: ['Routing rules'],
      params: SlugParams,
      query: ListRulesQuery,
      responses: { 200: { description: 'Rules', schema: Rule, list: true }, 404: { description: 'Node not found' } },
      handler: async ({ params, query, auth }) => {
        // A node's rules are few and all read for every scan anyway: page the ordered list.
        const all = await rules.list(auth.orgId, params.slug);
        return { data: all.slice(query.offset, query.offset + query.limit).map((r) => rules.toApi(r)), total: all.length };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/rules/{ruleId}',
      operationId: 'getRule',
      summary: 'Get a rule',
      tags: ['Routing rules'],
      params: RuleParams,
      responses: { 200: { description: 'The rule', schema: Rule }, 404: { description: 'Rule not found' } },
      handler: async ({ params, auth }) => ({ data: rules.toApi(await rules.get(auth.orgId, params.slug, params.ruleId)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/nodes/{slug}/rules/{ruleId}',
      operationId: 'updateRule',
      summary: 'Update a rule',
      tags: ['Routing rules'],
      params: RuleParams,
      body: UpdateRuleBody,
      responses: { 200: { description: 'Updated', schema: Rule }, 404: { description: 'Rule not found' } },
      handler: async ({ params, body, auth }) => ({ data: rules.toApi(await rules.update(auth.orgId, params.slug, params.ruleId, body)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/nodes/{slug}/rules/{ruleId}',
      operationId: 'deleteRule',
      summary: 'Delete a rule',
      tags: ['Routing rules'],
      params: RuleParams,
      responses: { 200: { description: 'Deleted', schema: Deleted.extend({ id: Rule.shape.id }) }, 404: { description: 'Rule not found' } },
      handler: async ({ params, auth }) => {
        await rules.remove(auth.orgId, params.slug, params.ruleId);
        return { data: { deleted: true, id: params.ruleId } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/nodes/{slug}/rules/{ruleId}/promote',
      operationId: 'promoteRule',
      summary: 'Promote a split-test variant: its content becomes the node\'s payload and the node\'s traffic_split rules are deleted',
      tags: ['Routing rules'],
      params: RuleParams,
      responses: {
        200: { description: 'The node with the promoted payload', schema: Node },
        404: { description: 'Node or rule not found' },
        409: { description: 'The rule is not a split-test variant' },
        422: { description: 'The variant does not fit the node (a template locks its type or fields)' },
      },
      handler: async ({ params, auth }) => ({ data: nodes.toApi(await rules.promote(auth.orgId, params.slug, params.ruleId), await nodes.scanBaseOf(auth.orgId)) }),
    }),
  ];
}
