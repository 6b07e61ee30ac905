import type { Executor, Store } from '../../db/store.ts';
import { AppError, ValidationError } from '../../platform/errors.ts';
import { hashPassword } from '../../platform/password.ts';
import { parseOrThrow } from '../../platform/validation.ts';
import type { FunctionType, NodeStatus } from '../../schemas/common.ts';
import { type ImportReportT, type ImportRowErrorT, NodeImportRow, type NodeImportRowT, type NodeExportRowT } from '../../schemas/nodeImport.ts';
import { applyTemplate, assertNoLockedOverride } from './payload.ts';
import type { NodeRow } from './repo.ts';
import type { NewNode, NodeService, TemplateLookup } from './service.ts';

export interface ImportOptions {
  /** all: every row valid or nothing written; partial: the valid rows written, the rest reported. */
  mode: 'all' | 'partial';
  /** Check and report, write nothing. */
  dryRun: boolean;
}

/** A create is checked at its row and written with the creates around it (NodeService.createManyIn). */
type RowOutcome = { action: 'created'; checked: NewNode } | { action: 'updated' | 'unchanged'; node: NodeRow };

/**
 * Checked creates written together: a few statements for hundreds of nodes instead of three
 * each. Written before any row that names a node, so events keep the order of the rows.
 */
const CREATE_BATCH = 500;

/** Statuses a PATCH may set, which is what an update row may change a status to. */
const UPDATE_STATUSES: readonly NodeStatus[] = ['active', 'paused', 'retired'];

/** Thrown to roll a dry run back once its report is made. */
class DryRun extends Error {
  readonly report: ImportReportT;
  constructor(report: ImportReportT) {
    super('dry run');
    this.report = report;
  }
}

/**
 * POST /v1/nodes/import: rows of nodes (a spreadsheet, or an export) created or updated through
 * NodeService, in one transaction, so the `node.*` events and the sync capture see every write
 * as for a single create or PATCH. A row naming an existing node (slug or serial) updates it; a
 * row that would change nothing writes nothing, so an export imported back is a no-op.
 */
export class NodeImporter {
  private readonly store: Store;
  private readonly nodes: NodeService;
  private readonly templates: TemplateLookup;

  constructor(deps: { store: Store; nodes: NodeService; templates: TemplateLookup }) {
    this.store = deps.store;
    this.nodes = deps.nodes;
    this.templates = deps.templates;
  }

  async run(orgId: string, rows: ReadonlyArray<Record<string, unknown>>, options: ImportOptions): Promise<ImportReportT> {
    // Passwords are hashed first: scrypt awaits, which a SQLite transaction cannot.
    const hashes = await passwordHashes(rows);
    try {
      return await this.store.transaction(async (tx) => {
        const report: ImportReportT = { mode: options.mode, dry_run: options.dryRun, created: 0, updated: 0, unchanged: 0, failed: 0, errors: [], rows: [] };
        // Creates checked but not written yet, with the index of their line in report.rows.
        let pending: Array<{ line: number; checked: NewNode }> = [];
        const writePending = async () => {
          if (pending.length === 0) return;
          const created = await this.nodes.createManyIn(tx, orgId, pending.map((p) => p.checked));
          created.forEach((node, i) => (report.rows[pending[i]!.line]!.slug = node.slug));
          pending = [];
        };
        for (const [i, raw] of rows.entries()) {
          const row = i + 1;
          try {
            const outcome = await this.importRow(tx, orgId, raw, hashes.get(raw), writePending);
            report[outcome.action]++;
            if (outcome.action === 'created') {
              pending.push({ line: report.rows.length, checked: outcome.checked });
              report.rows.push({ row, action: 'created', slug: null });
              if (pending.length >= CREATE_BATCH) await writePending();
            } else {
              report.rows.push({ row, action: outcome.action, slug: outcome.node.slug });
            }
          } catch (err) {
            // A row's own mistakes are reported; anything else (storage, an empty slug reserve) ends the import.
            if (!(err instanceof ValidationError)) throw err;
            report.failed++;
            report.errors.push(...rowErrors(row, err));
            report.rows.push({ row, action: 'failed', slug: typeof raw.slug === 'string' ? raw.slug : null });
          }
        }
        await writePending();
        if (options.dryRun) throw new DryRun(report);
        if (options.mode === 'all' && report.failed > 0) {
          throw new ValidationError(Object.fromEntries(report.errors.map((e) => [`rows.${e.row}.${e.field}`, e.message])));
        }
        return report;
      });
    } catch (err) {
      if (err instanceof DryRun) return err.report;
      throw err;
    }
  }

  /** `writePending`: the creates of earlier rows, written before a row that names a node is looked at. */
  private async importRow(tx: Executor, orgId: string, raw: Record<string, unknown>, passwordHash: string | undefined, writePending: () => Promise<void>): Promise<RowOutcome> {
    // Null is a field left out (an export writes null for no serial, no template, no limit).
    const input = parseOrThrow(NodeImportRow, Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null)));
    const password = input.password !== undefined && passwordHash !== undefined ? { password_hash: passwordHash } : {};
    if (input.slug !== undefined || input.serial !== undefined) await writePending();
    const target = await this.target(tx, orgId, input);
    return target ? this.update(tx, orgId, target, input, password) : this.create(tx, orgId, input, password);
  }

  /** The node a row names by slug and/or serial (both must name the same one), if it names one. */
  private async target(tx: Executor, orgId: string, input: NodeImportRowT): Promise<NodeRow | undefined> {
    let node: NodeRow | undefined;
    if (input.slug !== undefined) {
      // Another organization's slug is "not found" here too: no row can reach its node.
      node = await this.nodes.get(orgId, input.slug, tx).catch((err: unknown) => {
        if (err instanceof AppError && err.status === 404) throw new ValidationError({ slug: 'No node with this slug in this organization' });
        throw err;
      });
    }
    if (input.serial !== undefined) {
      const bySerial = await this.nodes.bySerial(tx, orgId, input.serial);
      if (!bySerial) throw new ValidationError({ serial: 'No node with this serial in this organization' });
      if (node && node.id !== bySerial.id) throw new ValidationError({ serial: `names another node than slug ${node.slug}` });
      node = bySerial;
    }
    return node;
  }

  private async create(tx: Executor, orgId: string, input: NodeImportRowT, password: { password_hash?: string }): Promise<RowOutcome> {
    const missing: Record<string, string> = {};
    for (const field of ['label', 'function_type', 'payload'] as const) if (input[field] === undefined) missing[field] = 'is required (or name a node to update with slug or serial)';
    if (input.status !== undefined && input.status !== 'active' && input.status !== 'draft') missing.status = 'must be one of: active, draft (a new node)';
    if (Object.keys(missing).length > 0) throw new ValidationError(missing);
    const checked = await this.nodes.checkCreate(tx, orgId, {
      label: input.label!,
      function_type: input.function_type!,
      payload: input.payload!,
      template_id: input.template_id,
      status: input.status as 'active' | 'draft' | undefined,
      expires_at: input.expires_at,
      max_scans: input.max_scans,
      after_limit: input.after_limit,
      password: input.password,
    }, password);
    return { action: 'created', checked };
  }

  /** The row's fields replace the node's (payload included); fields left out stay. */
  private async update(tx: Executor, orgId: string, node: NodeRow, input: NodeImportRowT, password: { password_hash?: string }): Promise<RowOutcome> {
    if (input.template_id !== undefined && input.template_id !== node.template_id) {
      throw new ValidationError({ template_id: "cannot change on an existing node (leave it as the export wrote it)" });
    }
    if (input.status !== undefined && input.status !== node.status && !UPDATE_STATUSES.includes(input.status)) {
      throw new ValidationError({ status: `must be one of: ${UPDATE_STATUSES.join(', ')} (or the node's own, ${node.status})` });
    }
    const type: FunctionType = input.function_type ?? node.function_type;
    let payload = input.payload ?? node.payload;
    if (input.payload !== undefined && node.template_id) {
      const template = await this.templates.get(tx, orgId, node.template_id);
      if (template) {
        assertNoLockedOverride(template, input.payload);
        payload = applyTemplate(template, input.payload);
      }
    }
    const label = input.label ?? node.label;
    const status = input.status ?? node.status;
    const limits = changedLimits(node, input);
    if (label === node.label && type === node.function_type && status === node.status && sameJson(payload, node.payload) && Object.keys(limits).length === 0) {
      return { action: 'unchanged', node };
    }
    // A PATCH whose merge patch turns the stored payload into the row's: the same checks (locked
    // fields and type, a complete payload), the same event.
    const updated = await this.nodes.updateIn(tx, orgId, node.slug, {
      ...(label !== node.label ? { label } : {}),
      ...(type !== node.function_type ? { function_type: type } : {}),
      ...(sameJson(payload, node.payload) && type === node.function_type ? {} : { payload: replacement(node.payload, payload) }),
      ...(status !== node.status ? { status: status as 'active' | 'paused' | 'retired' } : {}),
      ...limits,
    }, password);
    return { action: 'updated', node: updated };
  }
}

/**
 * The limits a row sets that differ from the node's (an instant compared as an instant, gone as
 * no fallback). A password given is always a change: its hash has a salt of its own.
 */
function changedLimits(node: NodeRow, input: NodeImportRowT): Pick<NodeImportRowT, 'expires_at' | 'max_scans' | 'after_limit' | 'password'> {
  const out: Pick<NodeImportRowT, 'expires_at' | 'max_scans' | 'after_limit' | 'password'> = {};
  // Null never arrives (importRow drops it: a field left out); != null says so to the compiler.
  if (input.expires_at != null && (node.expires_at === null || Date.parse(input.expires_at) !== Date.parse(node.expires_at))) out.expires_at = input.expires_at;
  if (input.max_scans != null && input.max_scans !== node.max_scans) out.max_scans = input.max_scans;
  if (input.after_limit != null && !sameJson(input.after_limit.type === 'gone' ? null : input.after_limit, node.after_limit)) out.after_limit = input.after_limit;
  if (input.password != null) out.password = input.password;
  return out;
}

/** Each row's password hashed, for the rows whose password the row check will accept. */
async function passwordHashes(rows: ReadonlyArray<Record<string, unknown>>): Promise<Map<Record<string, unknown>, string>> {
  const hashes = new Map<Record<string, unknown>, string>();
  const accepted = NodeImportRow.shape.password;
  await Promise.all(
    rows.map(async (row) => {
      if (typeof row.password === 'string' && accepted.safeParse(row.password).success) hashes.set(row, await hashPassword(row.password));
    }),
  );
  return hashes;
}

/** A JSON Merge Patch that turns `from` into `to`: `to`'s fields, and null for each one it drops. */
function replacement(from: Record<string, unknown>, to: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...to };
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  return patch;
}

/** Equal as JSON values, whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function rowErrors(row: number, err: ValidationError): ImportRowErrorT[] {
  const details = err.details ?? {};
  const entries = Object.entries(details);
  if (entries.length === 0) return [{ row, field: 'row', message: err.message }];
  return entries.map(([field, message]) => ({ row, field: field === '_' ? 'row' : field, message }));
}

/** A node as the export writes it (and the import reads it back). */
export function exportRow(node: NodeRow): NodeExportRowT {
  return {
    slug: node.slug,
    serial: node.serial,
    label: node.label,
    function_type: node.function_type,
    status: node.status,
    template_id: node.template_id,
    payload: node.payload,
    expires_at: node.expires_at,
    max_scans: node.max_scans,
    after_limit: node.after_limit,
  };
}
