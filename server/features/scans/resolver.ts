/**
 * What a scan serves (DESIGN §3 "Node status", "Scan responses", "Routing rules"): node status,
 * then rules in priority order, then the node's own payload; and the HTTP response for it.
 * Nodes and their compiled rules are cached in memory; the cache is dropped whenever the
 * database's scan_cache_epoch (bumped by triggers on nodes, rules and slugs) moves.
 */
import type { ScanRepo, NodeRowForScan, RuleRowForScan } from './repo.ts';
import { compileRules, evaluateRules, type CompiledRules, type ScanContext, type ScanRule } from './rules.ts';
import {
  digitalCardVcard,
  renderAction,
  renderDigitalCard,
  renderMicrosite,
  renderStatus,
  renderVcardPage,
  renderWifiPage,
  type ActionData,
  type DigitalCardData,
  type MicrositeData,
  type Rendered,
  type StatusKind,
} from './pages.ts';
import { buildVcard, vcardFileName, type VcardData, type WifiData } from './vcard.ts';
import { isValidContent } from './content.ts';

export interface Content {
  function_type: string;
  payload: Record<string, unknown>;
  /** Rendered response, computed once per content and cached with the node. */
  response?: ScanResponse;
}

export type ScanResponse = { kind: 'redirect'; location: string } | { kind: 'page'; rendered: Rendered };

export interface NodeEntry {
  kind: 'node';
  node: { id: string; org_id: string; slug: string; status: string };
  /** null when the node's own payload is missing or invalid for its type ("not active yet"). */
  own: Content | null;
  rules: CompiledRules;
  ruleContent: Map<string, Content>;
}

export type CacheEntry = NodeEntry | { kind: 'deleted' } | { kind: 'unknown' };

export type Resolution =
  | { kind: 'status'; status: StatusKind; outcome: string | null; entry: CacheEntry; rule: null }
  | { kind: 'content'; content: Content; outcome: string; entry: NodeEntry; rule: ScanRule | null };

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function toContent(function_type: string, payloadJson: string): Content | null {
  const payload = parseJson(payloadJson);
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return null;
  if (!isValidContent(function_type, payload as Record<string, unknown>)) return null;
  return { function_type, payload: payload as Record<string, unknown> };
}

function toRule(row: RuleRowForScan): ScanRule | null {
  const conditions = parseJson(row.conditions_json);
  const payload = parseJson(row.payload_json);
  if (!conditions || typeof conditions !== 'object' || !payload || typeof payload !== 'object') return null;
  return {
    id: row.id,
    rule_type: row.rule_type,
    conditions,
    function_type: row.function_type,
    payload,
    priority: row.priority,
    enabled: row.enabled === 1,
    created_at: row.created_at,
  } as ScanRule;
}

export function buildEntry(node: NodeRowForScan, ruleRows: RuleRowForScan[]): NodeEntry {
  const ruleContent = new Map<string, Content>();
  const rules: ScanRule[] = [];
  for (const row of ruleRows) {
    const rule = toRule(row);
    const content = toContent(row.function_type, row.payload_json);
    if (!rule || !content || !isValidConditions(rule)) continue; // validated on write; skip anything else
    rules.push(rule);
    ruleContent.set(rule.id, content);
  }
  return {
    kind: 'node',
    node: { id: node.id, org_id: node.org_id, slug: node.slug, status: node.status },
    own: toContent(node.function_type, node.payload_json),
    rules: compileRules(rules),
    ruleContent,
  };
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

function isValidConditions(rule: ScanRule): boolean {
  const c = rule.conditions as Record<string, unknown>;
  switch (rule.rule_type) {
    case 'time_based':
      return (
        typeof c.timezone === 'string' &&
        Array.isArray(c.windows) &&
        c.windows.every(
          (w: Record<string, unknown>) =>
            Array.isArray(w?.days) &&
            typeof w.start_time === 'string' &&
            /^\d{2}:\d{2}$/.test(w.start_time) &&
            typeof w.end_time === 'string' &&
            /^\d{2}:\d{2}$/.test(w.end_time),
        )
      );
    case 'geo_based':
      return isStringArray(c.countries);
    case 'device_based':
      return (c.devices === undefined || isStringArray(c.devices)) && (c.os === undefined || isStringArray(c.os));
    case 'traffic_split':
      return typeof c.weight === 'number';
    default:
      return false;
  }
}

/** Node + rules by canonical slug, cached; invalidated as a whole when the epoch moves. */
export class ScanCache {
  private readonly entries = new Map<string, CacheEntry>();
  private epoch = -1;
  private readonly repo: ScanRepo;
  private readonly max: number;
  constructor(repo: ScanRepo, max = 50_000) {
    this.repo = repo;
    this.max = max;
  }

  /** Call once per batch (or per uncached request path) before get(). */
  sync(): void {
    const now = this.repo.cacheEpoch();
    if (now !== this.epoch) {
      this.entries.clear();
      this.epoch = now;
    }
  }

  get(slug: string): CacheEntry {
    let e = this.entries.get(slug);
    if (e) return e;
    const node = this.repo.nodeBySlug(slug);
    if (node) e = buildEntry(node, this.repo.rulesOf(node.id));
    else e = this.repo.slugDeletedAt(slug) ? { kind: 'deleted' } : { kind: 'unknown' };
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(slug, e);
    return e;
  }
}

const SERVED = new Set(['active', 'lost']);

export function resolve(entry: CacheEntry, ctx: ScanContext | (() => ScanContext)): Resolution {
  if (entry.kind === 'unknown') return { kind: 'status', status: 'unknown', outcome: null, entry, rule: null };
  if (entry.kind === 'deleted') return { kind: 'status', status: 'deleted', outcome: null, entry, rule: null };
  const status = entry.node.status;
  if (status === 'paused') return { kind: 'status', status: 'paused', outcome: 'paused', entry, rule: null };
  if (status === 'retired') return { kind: 'status', status: 'retired', outcome: 'retired', entry, rule: null };
  if (!SERVED.has(status) || !entry.own) return { kind: 'status', status: 'inactive', outcome: 'inactive', entry, rule: null };
  if (entry.rules.rules.length > 0) {
    const rule = evaluateRules(entry.rules, typeof ctx === 'function' ? ctx() : ctx);
    const content = rule ? entry.ruleContent.get(rule.id) : undefined;
    if (rule && content) return { kind: 'content', content, outcome: content.function_type, entry, rule };
  }
  return { kind: 'content', content: entry.own, outcome: entry.own.function_type, entry, rule: null };
}

/** The response for served content (cached on the content object). */
export function contentResponse(content: Content, contactHref: string): ScanResponse {
  if (content.response) return content.response;
  const p = content.payload;
  let r: ScanResponse;
  switch (content.function_type) {
    case 'redirect':
      r = { kind: 'redirect', location: new URL(String(p.url)).href };
      break;
    case 'vcard':
      r = { kind: 'page', rendered: renderVcardPage(p as unknown as VcardData, contactHref) };
      break;
    case 'wifi':
      r = { kind: 'page', rendered: renderWifiPage(p as unknown as WifiData) };
      break;
    case 'microsite':
      r = { kind: 'page', rendered: renderMicrosite(p as unknown as MicrositeData) };
      break;
    case 'digital_card':
      r = { kind: 'page', rendered: renderDigitalCard(p as unknown as DigitalCardData, contactHref) };
      break;
    case 'action': {
      const a = renderAction(p as unknown as ActionData);
      r = 'redirect' in a ? { kind: 'redirect', location: a.redirect } : { kind: 'page', rendered: a.page };
      break;
    }
    default:
      r = { kind: 'page', rendered: renderStatus('inactive') };
  }
  content.response = r;
  return r;
}

/** The contact file of a vCard or a digital card (the pages' "Save contact"); null for other types. */
export function vcardResponse(content: Content): Rendered | null {
  let p: VcardData;
  if (content.function_type === 'vcard') p = content.payload as unknown as VcardData;
  else if (content.function_type === 'digital_card') p = digitalCardVcard(content.payload as unknown as DigitalCardData);
  else return null;
  const name = vcardFileName(p);
  return {
    status: 200,
    headers: {
      'content-type': 'text/vcard; charset=utf-8',
      'content-disposition': `attachment; filename="${name.ascii}"; filename*=UTF-8''${encodeURIComponent(name.utf8)}`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    body: buildVcard(p),
  };
}
