import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { mergePatch } from '../../platform/mergePatch.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { FunctionType, NodeStatus } from '../../schemas/common.ts';
import type { AfterLimitT, NodeT } from '../../schemas/nodes.ts';
import { hashPassword } from '../../platform/password.ts';
import type { SyncChangeT } from '../../schemas/sync.ts';
import { normalizeSlug, type SlugAllocator } from '../slugs/index.ts';
import type { TemplateRow } from '../templates/index.ts';
import { applyTemplate, assertNoLockedOverride, assertTemplateFits, validatePartialPayload, validatePayload } from './payload.ts';
import type { NodeFilter, NodeRow, NodesRepo } from './repo.ts';

/** Node limits as create and PATCH take them: undefined = unchanged, null = cleared. */
export interface NodeLimitsInput {
  expires_at?: string | null | undefined;
  max_scans?: number | null | undefined;
  /** Clear text, hashed before it is stored; never kept. */
  password?: string | null | undefined;
  after_limit?: AfterLimitT | null | undefined;
}

export interface CreateNodeInput extends NodeLimitsInput {
  label: string;
  function_type: FunctionType;
  payload: Record<string, unknown>;
  template_id?: string | undefined;
  status?: 'active' | 'draft' | undefined;
}

export interface UpdateNodeInput extends NodeLimitsInput {
  label?: string | undefined;
  function_type?: FunctionType | undefined;
  payload?: Record<string, unknown> | undefined;
  status?: 'active' | 'paused' | 'retired' | undefined;
}

type LimitColumns = Partial<Pick<NodeRow, 'expires_at' | 'max_scans' | 'password_hash' | 'after_limit'>>;

/** What a new node stores beside the slug, id, counters and times the service gives it. */
export type NewNode = Pick<NodeRow, 'label' | 'function_type' | 'payload' | 'status' | 'template_id'> & LimitColumns;

/** The stored form of the limits given, but the password (expires_at normalised to UTC; gone = null). */
function plainLimitColumns(input: NodeLimitsInput): LimitColumns {
  const out: LimitColumns = {};
  if (input.expires_at !== undefined) out.expires_at = input.expires_at === null ? null : new Date(input.expires_at).toISOString();
  if (input.max_scans !== undefined) out.max_scans = input.max_scans;
  if (input.after_limit !== undefined) out.after_limit = input.after_limit === null || input.after_limit.type === 'gone' ? null : input.after_limit;
  return out;
}

/** The password's stored form, computed outside any transaction (scrypt takes ~50 ms). */
async function passwordColumn(input: NodeLimitsInput): Promise<Pick<LimitColumns, 'password_hash'>> {
  if (input.password === undefined) return {};
  return { password_hash: input.password === null ? null : await hashPassword(input.password) };
}

/** What a node takes from its template (the templates feature answers). */
export interface TemplateLookup {
  get(db: Executor, orgId: string, id: string): Promise<TemplateRow | undefined>;
}

/** The fields other features may change on a node (NodeService.change). */
export type NodeChange = Partial<Pick<NodeRow, 'payload' | 'status' | 'hardware_id'>>;

export interface NodeServiceDeps {
  store: Store;
  clock: Clock;
  outbox: Pick<Outbox, 'record' | 'recordMany'>;
  nodes: NodesRepo;
  templates: TemplateLookup;
  slugs: SlugAllocator;
  /** `{scan_base}` of an organization (its own scan domain, else the instance default). */
  scanBase: (db: Executor, orgId: string) => Promise<string>;
}

/**
 * Nodes, and the one writer of the nodes table: other features (templates, batches, NFC) change
 * nodes through the methods here that take the caller's transaction, which also record the
 * `node.*` events.
 */
export class NodeService {
  private readonly deps: NodeServiceDeps;
  private readonly scanBasesIn = new WeakMap<Executor, Map<string, string>>();

  constructor(deps: NodeServiceDeps) {
    this.deps = deps;
  }

  /** `{scan_base}` of `orgId`: its node URLs are `{scan_base}/v/<slug>`. */
  scanBaseOf(orgId: string, db: Executor = this.deps.store.db): Promise<string> {
    return this.deps.scanBase(db, orgId);
  }

  /** The node as the API shows it; `scanBase` from scanBaseOf (read once per request). */
  toApi(node: NodeRow, scanBase: string): NodeT {
    return {
      id: node.id,
      slug: node.slug,
      label: node.label,
      url: scanUrl(scanBase, node.slug),
      function_type: node.function_type,
      payload: node.payload,
      status: node.status,
      hardware_id: node.hardware_id,
      scan_count: node.scan_count,
      template_id: node.template_id,
      batch_id: node.batch_id,
      serial: node.serial,
      expires_at: node.expires_at,
      max_scans: node.max_scans,
      password_protected: node.password_hash !== null,
      after_limit: node.after_limit ?? { type: 'gone' },
      created_at: node.created_at,
      updated_at: node.updated_at,
    };
  }

  async create(orgId: string, input: CreateNodeInput): Promise<NodeRow> {
    const password = await passwordColumn(input);
    return this.deps.store.transaction((tx) => this.createIn(tx, orgId, input, password));
  }

  /**
   * A create in the caller's transaction; records `node.created`. A password arrives hashed
   * (passwordColumn): hashing awaits, which a SQLite transaction cannot.
   */
  async createIn(tx: Executor, orgId: string, input: CreateNodeInput, password: Pick<LimitColumns, 'password_hash'> = {}): Promise<NodeRow> {
    const [node] = await this.createManyIn(tx, orgId, [await this.checkCreate(tx, orgId, input, password)]);
    return node!;
  }

  /**
   * A create's checks (template, payload complete for its type) and the fields it would store,
   * nothing written: the import checks each row, then writes them together (createManyIn).
   */
  async checkCreate(tx: Executor, orgId: string, input: CreateNodeInput, password: Pick<LimitColumns, 'password_hash'> = {}): Promise<NewNode> {
    if (input.password !== undefined && password.password_hash === undefined) throw new Error('createIn: hash the password first (passwordColumn)');
    let payload = input.payload;
    let templateId: string | null = null;
    if (input.template_id !== undefined) {
      const template = await this.deps.templates.get(tx, orgId, input.template_id);
      if (!template) throw new ValidationError({ template_id: 'Template not found' });
      assertTemplateFits(template, input.function_type);
      assertNoLockedOverride(template, payload);
      payload = applyTemplate(template, payload);
      templateId = template.id;
    }
    validatePayload(input.function_type, payload);
    return {
      label: input.label,
      function_type: input.function_type,
      payload,
      status: input.status ?? 'active',
      template_id: templateId,
      ...plainLimitColumns(input),
      ...password,
    };
  }

  /**
   * Nodes checked by checkCreate, in the caller's transaction: a slug minted for each, then the
   * rows and their `node.created` events written in this order, a few hundred per statement.
   */
  async createManyIn(tx: Executor, orgId: string, checked: readonly NewNode[]): Promise<NodeRow[]> {
    const ids = checked.map(() => newId());
    const slugs = await this.deps.slugs.mintMany(tx, orgId, ids);
    const nodes = checked.map((fields, i) => this.newRow(orgId, ids[i]!, slugs[i]!, fields));
    await this.deps.nodes.insertMany(tx, nodes);
    const events: Array<{ type: string; data: NodeT }> = [];
    for (const node of nodes) events.push({ type: 'node.created', data: await this.apiIn(tx, node) });
    await this.deps.outbox.recordMany(tx, orgId, events);
    return nodes;
  }

  /** Mints a slug and inserts a node, in the caller's transaction (batch generation). */
  async newNode(tx: Executor, orgId: string, fields: NewNode & Partial<Pick<NodeRow, 'batch_id' | 'serial' | 'serial_number'>>): Promise<NodeRow> {
    const node = await this.mintedRow(tx, orgId, fields);
    await this.deps.nodes.insert(tx, node);
    return node;
  }

  /** A new node's row with a slug minted for it (recorded in the caller's transaction), not inserted yet. */
  private async mintedRow(tx: Executor, orgId: string, fields: NewNode & Partial<Pick<NodeRow, 'batch_id' | 'serial' | 'serial_number'>>): Promise<NodeRow> {
    const id = newId();
    return this.newRow(orgId, id, await this.deps.slugs.mint(tx, orgId, id), fields);
  }

  private newRow(orgId: string, id: string, slug: string, fields: NewNode & Partial<Pick<NodeRow, 'batch_id' | 'serial' | 'serial_number'>>): NodeRow {
    const now = this.now();
    return {
      id,
      org_id: orgId,
      slug,
      hardware_id: null,
      scan_count: 0,
      batch_id: null,
      serial: null,
      serial_number: null,
      expires_at: null,
      max_scans: null,
      password_hash: null,
      after_limit: null,
      created_at: now,
      updated_at: now,
      ...fields,
    };
  }

  /**
   * A node from an organization's export (waymark import), as it was: its id, slug (claimed
   * here: printed codes keep working), limits with the password's hash, scan count and times.
   * Checked like a create (payload complete for its type, template of the organization and of
   * the type, locked fields as the template has them); records `node.created`.
   */
  async restoreIn(tx: Executor, node: NodeRow): Promise<NodeRow> {
    const slug = normalizeSlug(node.slug);
    if (slug !== node.slug) throw new ValidationError({ slug: 'is not a Waymark slug' });
    if (node.template_id !== null) {
      const template = await this.deps.templates.get(tx, node.org_id, node.template_id);
      if (!template) throw new ValidationError({ template_id: 'Template not found' });
      assertTemplateFits(template, node.function_type);
      assertNoLockedOverride(template, node.payload);
    }
    // A batch node not configured yet may hold part of a payload, as generation left it.
    if (node.status === 'draft' || node.status === 'in_production') validatePartialPayload(node.function_type, node.payload);
    else validatePayload(node.function_type, node.payload);
    if (!(await this.deps.slugs.claim(tx, node.org_id, node.id, slug))) throw new ValidationError({ slug: `${slug} is already used on this instance` });
    await this.deps.nodes.insert(tx, node);
    await this.deps.outbox.record(tx, node.org_id, 'node.created', await this.apiIn(tx, node));
    return node;
  }

  async get(orgId: string, slugInput: string, db: Executor = this.deps.store.db): Promise<NodeRow> {
    const slug = normalizeSlug(slugInput);
    const node = slug ? await this.deps.nodes.getBySlug(db, orgId, slug) : undefined;
    if (!node) throw notFound.node();
    return node;
  }

  /** The node with a serial (a batch node) in an organization. */
  bySerial(db: Executor, orgId: string, serial: string): Promise<NodeRow | undefined> {
    return this.deps.nodes.getBySerial(db, orgId, serial);
  }

  /** An organization's nodes in insertion order, a page at a time (keyset on rowid: the export). */
  async *pages(orgId: string, pageSize: number): AsyncGenerator<NodeRow[]> {
    let after = 0;
    for (;;) {
      const page = await this.deps.nodes.pageAfter(this.deps.store.db, orgId, after, pageSize);
      if (page.length === 0) return;
      yield page.map((p) => p.node);
      after = page[page.length - 1]!.rowid;
      if (page.length < pageSize) return;
    }
  }

  /** A node by id (any organization: callers hold the id from their own rows). */
  byId(db: Executor, id: string): Promise<NodeRow | undefined> {
    return this.deps.nodes.get(db, id);
  }

  /** The node a tag (hardware id) is bound to in an organization. */
  byHardwareId(db: Executor, orgId: string, hardwareId: string): Promise<NodeRow | undefined> {
    return this.deps.nodes.getByHardwareId(db, orgId, hardwareId);
  }

  /** Nodes bound to a template, oldest first. */
  boundToTemplate(db: Executor, templateId: string): Promise<NodeRow[]> {
    return this.deps.nodes.boundToTemplate(db, templateId);
  }

  /** Nodes of a batch with a tag bound. */
  writtenInBatch(db: Executor, batchId: string): Promise<number> {
    return this.deps.nodes.countWritten(db, batchId);
  }

  list(orgId: string, filter: NodeFilter, db: Executor = this.deps.store.db): Promise<{ rows: NodeRow[]; total: number }> {
    return this.deps.nodes.list(db, orgId, filter);
  }

  async update(orgId: string, slugInput: string, input: UpdateNodeInput): Promise<NodeRow> {
    const password = await passwordColumn(input);
    return this.deps.store.transaction((tx) => this.updateIn(tx, orgId, slugInput, input, password));
  }

  /**
   * A PATCH in the caller's transaction (promoting a split-test variant composes it with deleting
   * the rules). `password`: input's password hashed beforehand (passwordColumn), if it has one.
   */
  async updateIn(tx: Executor, orgId: string, slugInput: string, input: UpdateNodeInput, password: Pick<LimitColumns, 'password_hash'> = {}): Promise<NodeRow> {
    if (input.password !== undefined && password.password_hash === undefined) throw new Error('updateIn: hash the password first (passwordColumn)');
    const node = await this.get(orgId, slugInput, tx);
    const template = node.template_id ? await this.deps.templates.get(tx, orgId, node.template_id) : undefined;
    const next: NodeRow = { ...node, ...plainLimitColumns(input), ...password };
    if (input.label !== undefined) next.label = input.label;
    if (input.status !== undefined) next.status = input.status;

    if (input.function_type !== undefined && input.function_type !== node.function_type) {
      if (template) throw new ValidationError({ function_type: 'Locked by template' }, 'Locked by template');
      // A new type replaces the payload, which must then be complete for that type.
      next.function_type = input.function_type;
      next.payload = validatePayload(input.function_type, mergePatch({}, input.payload ?? {}));
    } else if (input.payload !== undefined) {
      if (template) assertNoLockedOverride(template, input.payload);
      next.payload = validatePayload(node.function_type, mergePatch(node.payload, input.payload));
    }
    next.updated_at = this.now();
    return this.save(tx, next);
  }

  /** Sets a status outside PATCH's allowed values (lost, or active after a tag is verified). */
  setStatus(orgId: string, slugInput: string, status: NodeStatus): Promise<NodeRow> {
    return this.deps.store.transaction(async (tx) => this.change(tx, await this.get(orgId, slugInput, tx), { status }));
  }

  /**
   * Changes a node in the caller's transaction and records `node.updated` (templates pushing a
   * locked field, a batch deployed, a tag bound or released). `at` defaults to now.
   */
  change(tx: Executor, node: NodeRow, fields: NodeChange, at: string = this.now()): Promise<NodeRow> {
    return this.save(tx, { ...node, ...fields, updated_at: at });
  }

  remove(orgId: string, slugInput: string): Promise<NodeRow> {
    return this.deps.store.transaction(async (tx) => {
      const node = await this.get(orgId, slugInput, tx);
      const at = this.now();
      await this.deps.nodes.delete(tx, node, at);
      await this.deps.outbox.record(tx, orgId, 'node.deleted', { id: node.id, slug: node.slug, deleted_at: at });
      return node;
    });
  }

  /**
   * The events for a node change a site pushed (sync applies it; the remote emits the webhook
   * events, paired sites deliver none themselves). Runs in the push's transaction.
   */
  async remoteChangeApplied(tx: Executor, orgId: string, change: Pick<SyncChangeT, 'entity' | 'entity_id' | 'fields'>, effect: 'created' | 'updated' | 'deleted'): Promise<void> {
    if (change.entity !== 'node') return;
    if (effect === 'deleted') {
      await this.deps.outbox.record(tx, orgId, 'node.deleted', { id: change.entity_id, slug: change.fields.slug, deleted_at: this.now() });
      return;
    }
    const node = await this.deps.nodes.get(tx, change.entity_id);
    if (node) await this.deps.outbox.record(tx, orgId, effect === 'created' ? 'node.created' : 'node.updated', await this.apiIn(tx, node));
  }

  private async save(tx: Executor, next: NodeRow): Promise<NodeRow> {
    await this.deps.nodes.update(tx, next);
    await this.deps.outbox.record(tx, next.org_id, 'node.updated', await this.apiIn(tx, next));
    return next;
  }

  /**
   * The node as events carry it, in the caller's transaction. The scan base is read once per
   * transaction and organization: an import records thousands of events in one.
   */
  private async apiIn(tx: Executor, node: NodeRow): Promise<NodeT> {
    if (tx === this.deps.store.db) return this.toApi(node, await this.deps.scanBase(tx, node.org_id));
    let bases = this.scanBasesIn.get(tx);
    if (!bases) this.scanBasesIn.set(tx, (bases = new Map()));
    let base = bases.get(node.org_id);
    if (base === undefined) bases.set(node.org_id, (base = await this.deps.scanBase(tx, node.org_id)));
    return this.toApi(node, base);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

/** `{scan_base}/v/<slug>` */
export function scanUrl(scanBase: string, slug: string): string {
  return `${scanBase.replace(/\/+$/, '')}/v/${slug}`;
}
