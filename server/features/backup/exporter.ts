import type { BatchService } from '../batches/index.ts';
import type { NodeRow, NodeService } from '../nodes/index.ts';
import type { RuleRow, RuleService } from '../rules/index.ts';
import type { TemplateService } from '../templates/index.ts';
import type { WebhookService } from '../webhooks/index.ts';
import { BACKUP_FORMAT, BACKUP_OMITTED, BACKUP_VERSION, type BackupNodeT, type BackupRuleT } from '../../schemas/organizationBackup.ts';

/** Nodes read per page: the memory an export holds, whatever the organization's size. */
const PAGE = 500;
/**
 * Characters yielded at a time. A whole page as one string (~200 KB) is a large object for V8,
 * collected only by a full GC: the process grew by the size of the export (+150 MiB for
 * 100,000 nodes). Pieces this small die young, in the scavenges.
 */
const CHUNK = 16 * 1024;

export interface BackupServices {
  nodes: NodeService;
  rules: RuleService;
  templates: TemplateService;
  batches: BatchService;
  webhooks: WebhookService;
}

/** Oldest first, the id breaking ties: the same organization always exports in the same order. */
const byAge = <T extends { created_at: string; id: string }>(a: T, b: T) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * `waymark export --org`: an organization as one JSON document (schemas/organizationBackup.ts),
 * yielded in pieces: templates, batches and webhooks first (few), then the nodes a page at a time
 * with their rules, one node a line. Never a secret: no webhook secret, no clear-text password
 * (a node's password travels as its scrypt hash).
 */
export async function* exportOrganization(services: BackupServices, org: { id: string; name: string }, now: Date): AsyncGenerator<string> {
  const { nodes, rules, templates, batches, webhooks } = services;
  const head = { format: BACKUP_FORMAT, version: BACKUP_VERSION, exported_at: now.toISOString(), organization: { id: org.id, name: org.name }, omitted: BACKUP_OMITTED };
  yield `${JSON.stringify(head).slice(0, -1)},\n`;
  const list = (rows: unknown[]) => (rows.length === 0 ? '[]' : `[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n]`);
  const ownTemplates = (await templates.all(org.id)).sort(byAge).map(({ org_id: _org, ...t }) => t);
  yield `"templates":${list(ownTemplates)},\n`;
  const ownBatches = (await batches.all(org.id)).sort(byAge).map(({ org_id: _org, ...b }) => b);
  yield `"batches":${list(ownBatches)},\n`;
  const ownWebhooks = (await webhooks.endpoints(org.id)).sort(byAge).map((w) => ({
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    active: w.active,
    created_at: w.created_at,
    updated_at: w.updated_at,
  }));
  yield `"webhooks":${list(ownWebhooks)},\n`;
  yield '"nodes":[';
  let first = true;
  let chunk = '';
  for await (const page of nodes.pages(org.id, PAGE)) {
    const rulesOf = await rules.ofNodes(page.map((n) => n.id));
    for (const n of page) {
      chunk += `${first ? '\n' : ',\n'}${JSON.stringify(backupNode(n, rulesOf.get(n.id) ?? []))}`;
      first = false;
      if (chunk.length >= CHUNK) {
        yield chunk;
        chunk = '';
      }
    }
  }
  yield `${chunk}${first ? ']}\n' : '\n]}\n'}`;
}

function backupNode(n: NodeRow, rules: RuleRow[]): BackupNodeT {
  return {
    id: n.id,
    slug: n.slug,
    label: n.label,
    function_type: n.function_type,
    payload: n.payload,
    status: n.status,
    hardware_id: n.hardware_id,
    scan_count: n.scan_count,
    template_id: n.template_id,
    batch_id: n.batch_id,
    serial: n.serial,
    serial_number: n.serial_number,
    expires_at: n.expires_at,
    max_scans: n.max_scans,
    password_hash: n.password_hash,
    after_limit: n.after_limit,
    created_at: n.created_at,
    updated_at: n.updated_at,
    rules: rules.map(backupRule),
  };
}

function backupRule(r: RuleRow): BackupRuleT {
  return {
    id: r.id,
    rule_type: r.rule_type,
    conditions: r.conditions,
    function_type: r.function_type,
    payload: r.payload,
    priority: r.priority,
    enabled: r.enabled,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
