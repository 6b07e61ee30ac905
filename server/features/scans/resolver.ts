/**
 * What a scan serves (DESIGN §3 "Node status", "Scan responses", "Routing rules"): node status,
 * then rules in priority order, then the node's own payload; and the HTTP response for it.
 * Nodes and their compiled rules are cached in memory; the cache is dropped whenever the
 * database's scan_cache_epoch (bumped by triggers on nodes, rules and slugs) moves.
 */
import type { ScanRepo, NodeRowForScan, RuleRowForScan } from './repo.ts';
import { compileRules, evaluateRules, readConditions, type CompiledRules, type ScanContext, type ScanRule } from './rules.ts';
import type { Rendered, StatusKind } from './pages.ts';
import type { FunctionType } from '../../schemas/common.ts';
import { functionTypeOf, functionTypes } from '../../functionTypes/registry.ts';
import { isHttpUrl } from '../../schemas/common.ts';
import type { FunctionTypeDef, ScanResponse } from '../../functionTypes/define.ts';

export type { ScanResponse } from '../../functionTypes/define.ts';

export interface Content {
  function_type: FunctionType;
  payload: Record<string, unknown>;
  /** Rendered response, computed once per content and cached with the node. */
  response?: ScanResponse;
}

/** A node's limits (docs/scans.md "Node limits"), on its cache entry so that checking costs no read. */
export interface NodeLimits {
  /** Clock ms from which the node is expired; null = never. */
  expiresAt: number | null;
  maxScans: number | null;
  /**
   * Counted scans so far: scan_count when the entry was read, plus the counted scans resolved
   * against this entry since (scan_count updates do not drop the cache; the handler adds them).
   */
  counted: number;
  passwordHash: string | null;
  /** What an expired or used-up node serves: null = the 410 page, else this redirect. */
  fallback: Content | null;
}

export interface NodeEntry {
  kind: 'node';
  node: { id: string; org_id: string; slug: string; status: string };
  /** null when the node's own payload is missing or invalid for its type ("not active yet"). */
  own: Content | null;
  rules: CompiledRules;
  ruleContent: Map<string, Content>;
  /** null for a node without limits: the hot path's one extra check. */
  limits: NodeLimits | null;
}

/** Why a node serves after_limit. */
export type LimitReason = 'expired' | 'limit_reached';

export type CacheEntry = NodeEntry | { kind: 'deleted' } | { kind: 'unknown' };

export type Resolution =
  | { kind: 'status'; status: StatusKind; outcome: string | null; entry: CacheEntry; rule: null }
  | { kind: 'content'; content: Content; outcome: string; entry: NodeEntry; rule: ScanRule | null };

function limitsOf(node: NodeRowForScan): NodeLimits | null {
  if (node.expires_at === null && node.max_scans === null && node.password_hash === null) return null;
  const expiresAt = node.expires_at === null ? Number.NaN : Date.parse(node.expires_at);
  return {
    // An unreadable stored time (a hand edit) expires the node rather than serving it forever.
    expiresAt: node.expires_at === null ? null : Number.isNaN(expiresAt) ? 0 : expiresAt,
    maxScans: node.max_scans,
    counted: node.scan_count,
    passwordHash: node.password_hash,
    fallback: fallbackOf(node.after_limit_json),
  };
}

/** after_limit as stored: only a redirect to an http(s) address is a fallback; anything else is the 410 page. */
function fallbackOf(json: string | null): Content | null {
  if (json === null) return null;
  const value = parseJson(json) as { type?: unknown; url?: unknown } | null;
  if (!value || value.type !== 'redirect' || typeof value.url !== 'string' || !isHttpUrl(value.url)) return null;
  return { function_type: 'redirect', payload: { url: value.url } };
}

/**
 * Whether `limits` stop a request at `at` (clock ms), and why: the one decision every path that
 * serves content makes. `counted`: the node's counted scans to decide on; a scan decides on its
 * entry's count (made exact under the write's row lock on PostgreSQL, handler.ts Recount), a
 * request that records nothing (HEAD, contact.vcf, the password form) on scan_count as stored.
 */
export function limitReason(limits: NodeLimits, at: number, counted = limits.counted): LimitReason | null {
  if (limits.expiresAt !== null && at >= limits.expiresAt) return 'expired';
  if (limits.maxScans !== null && counted >= limits.maxScans) return 'limit_reached';
  return null;
}

/** How a request is resolved beyond the scan's own state (resolve). */
export interface ResolveOptions {
  /** The visitor gave the node's password (the password page's form): the gate is passed; limits still apply. */
  unlocked?: boolean;
  /** The counted scans to decide max_scans on, instead of the entry's (limitReason). */
  counted?: number;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The schemas' answers on stored text, kept across cache rebuilds: every write anywhere drops the
 * cache, and most rows read back are unchanged, so each distinct payload or conditions text goes
 * through its (write-time) zod schema once rather than at every rebuild (a time zone check alone
 * costs ~0.5 ms). Bounded by the text it holds.
 */
export class SchemaAnswers {
  private readonly answers = new Map<string, unknown>();
  private chars = 0;
  private readonly maxChars: number;
  constructor(maxChars = 4_000_000) {
    this.maxChars = maxChars;
  }

  get<T>(key: string, compute: () => T): T {
    if (this.answers.has(key)) return this.answers.get(key) as T;
    const value = compute();
    if (this.chars + key.length > this.maxChars) {
      this.answers.clear();
      this.chars = 0;
    }
    this.answers.set(key, value);
    this.chars += key.length;
    return value;
  }
}

/**
 * The content a stored payload serves, or null when it is not complete and valid for its type
 * (an unconfigured batch node, a damaged row, a type this build does not know): the same schema
 * that validated it on write decides, so a scan can never produce a 5xx or an unsafe link.
 * Served exactly as stored (like validatePayload, the schema only judges).
 */
function toContent(function_type: string, payloadJson: string, answers: SchemaAnswers): Content | null {
  const def = functionTypeOf(function_type);
  if (!def) return null;
  const payload = parseJson(payloadJson);
  if (!answers.get(`${function_type}\u0000${payloadJson}`, () => def.isComplete(payload))) return null;
  return { function_type: function_type as FunctionType, payload: payload as Record<string, unknown> };
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
    payload: payload as Record<string, unknown>,
    priority: row.priority,
    enabled: row.enabled === 1,
    created_at: row.created_at,
  };
}

export function buildEntry(node: NodeRowForScan, ruleRows: RuleRowForScan[], answers = new SchemaAnswers()): NodeEntry {
  const ruleContent = new Map<string, Content>();
  const rules: ScanRule[] = [];
  const conditionsText = new Map<ScanRule, string>();
  for (const row of ruleRows) {
    const rule = toRule(row);
    const content = toContent(row.function_type, row.payload_json, answers);
    // Validated on write; skip anything else (conditions are read by compileRules).
    if (!rule || !content) continue;
    rules.push(rule);
    ruleContent.set(rule.id, content);
    conditionsText.set(rule, `${row.rule_type}\u0000${row.conditions_json}`);
  }
  return {
    kind: 'node',
    node: { id: node.id, org_id: node.org_id, slug: node.slug, status: node.status },
    own: toContent(node.function_type, node.payload_json, answers),
    // Parsed conditions are only read by matchers, so rules with the same text may share them.
    rules: compileRules(rules, (rule) => answers.get(conditionsText.get(rule) as string, () => readConditions(rule))),
    ruleContent,
    limits: limitsOf(node),
  };
}

/** Node + rules by canonical slug, cached; invalidated as a whole when the epoch moves. */
export class ScanCache {
  private readonly entries = new Map<string, CacheEntry>();
  private epoch = -1;
  private readonly repo: ScanRepo;
  private readonly max: number;
  private readonly answers = new SchemaAnswers();
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
    if (node) e = buildEntry(node, this.repo.rulesOf(node.id), this.answers);
    else e = this.repo.slugDeletedAt(slug) ? { kind: 'deleted' } : { kind: 'unknown' };
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(slug, e);
    return e;
  }
}

const SERVED = new Set(['active', 'lost']);

/** What a request at `at` (clock ms) gets (options: ResolveOptions). */
export function resolve(entry: CacheEntry, ctx: ScanContext | (() => ScanContext), at: number, options: ResolveOptions = {}): Resolution {
  if (entry.kind === 'unknown') return { kind: 'status', status: 'unknown', outcome: null, entry, rule: null };
  if (entry.kind === 'deleted') return { kind: 'status', status: 'deleted', outcome: null, entry, rule: null };
  const status = entry.node.status;
  if (status === 'paused') return { kind: 'status', status: 'paused', outcome: 'paused', entry, rule: null };
  if (status === 'retired') return { kind: 'status', status: 'retired', outcome: 'retired', entry, rule: null };
  if (!SERVED.has(status) || !entry.own) return { kind: 'status', status: 'inactive', outcome: 'inactive', entry, rule: null };
  const limits = entry.limits;
  if (limits !== null) {
    const reason = limitReason(limits, at, options.counted);
    if (reason !== null) {
      return limits.fallback
        ? { kind: 'content', content: limits.fallback, outcome: reason, entry, rule: null }
        : { kind: 'status', status: reason, outcome: reason, entry, rule: null };
    }
    if (limits.passwordHash !== null && options.unlocked !== true) return { kind: 'status', status: 'password', outcome: 'password', entry, rule: null };
  }
  if (entry.rules.rules.length > 0) {
    const rule = evaluateRules(entry.rules, typeof ctx === 'function' ? ctx() : ctx);
    const content = rule ? entry.ruleContent.get(rule.id) : undefined;
    if (rule && content) return { kind: 'content', content, outcome: content.function_type, entry, rule };
  }
  return { kind: 'content', content: entry.own, outcome: entry.own.function_type, entry, rule: null };
}

/** The response for served content (cached on the content object). */
export function contentResponse(content: Content, contactHref: string): ScanResponse {
  if (!content.response) content.response = definitionOf(content).respond(content.payload, { contactHref });
  return content.response;
}

/** The file at `/v/<slug>/contact.vcf` for this content, or null when its type has none. */
export function contactFileResponse(content: Content): Rendered | null {
  return definitionOf(content).contactFile?.(content.payload) ?? null;
}

function definitionOf(content: Content): FunctionTypeDef {
  // toContent only makes Content of a known type whose payload its schema accepted.
  return functionTypes[content.function_type] as FunctionTypeDef;
}
