import type { Store } from '../../db/store.ts';
import { ConflictError, ValidationError } from '../../platform/errors.ts';
import { parseOrThrow } from '../../platform/validation.ts';
import { BACKUP_VERSION, BackupHeader, OrganizationBackup } from '../../schemas/organizationBackup.ts';
import type { BackupServices } from './exporter.ts';

export interface ImportedWebhook {
  id: string;
  url: string;
  /** The new signing secret: the export carries none, the receiver must be given this one. */
  secret: string;
}

export interface OrganizationImportReport {
  templates: number;
  batches: number;
  nodes: number;
  rules: number;
  webhooks: ImportedWebhook[];
}

/**
 * `waymark import --org`: a document `waymark export --org` wrote, into an organization with
 * nothing in it yet, in one transaction (all or nothing). Every entity is checked by the
 * document's schema, then written by its own feature with the checks of a create (nodes through
 * the nodes feature, which records `node.created`). Ids, slugs and times are kept, so exporting
 * the imported organization gives the same document but for the organization and the time.
 * Webhooks come last: they get a new secret and deliver only what happens after the import.
 */
export async function importOrganization(store: Store, services: BackupServices, orgId: string, document: unknown): Promise<OrganizationImportReport> {
  const header = parseOrThrow(BackupHeader, document);
  if (header.version !== BACKUP_VERSION) {
    throw new ValidationError({ version: `is ${header.version}: this Waymark reads version ${BACKUP_VERSION} (import it with the Waymark that wrote it, or a newer one)` });
  }
  const doc = parseOrThrow(OrganizationBackup, document);
  const { nodes, rules, templates, batches, webhooks } = services;
  // Checked before the transaction: reads only.
  const nonEmpty = [
    (await nodes.list(orgId, { limit: 1, offset: 0 })).total > 0 && 'nodes',
    (await templates.all(orgId)).length > 0 && 'templates',
    (await batches.all(orgId)).length > 0 && 'batches',
    (await webhooks.endpoints(orgId)).length > 0 && 'webhooks',
  ].filter((x) => x !== false);
  if (nonEmpty.length > 0) throw new ConflictError(`organization ${orgId} is not empty (it has ${nonEmpty.join(', ')}): import into a new one (waymark org create)`);
  const batchIds = new Set(doc.batches.map((b) => b.id));
  // Its nodes are not all there yet, and a generator here would make the rest with new slugs.
  const unfinished = doc.batches.findIndex((b) => b.status === 'pending' || b.status === 'generating');
  if (unfinished >= 0) throw new ValidationError({ [`batches.${unfinished}.status`]: 'is still generating: export again once the batch is ready' });

  return store.transaction(async (tx) => {
    const report: OrganizationImportReport = { templates: 0, batches: 0, nodes: 0, rules: 0, webhooks: [] };
    for (const [i, t] of doc.templates.entries()) {
      await at(`templates.${i}`, () => templates.restoreIn(tx, { ...t, org_id: orgId }));
      report.templates++;
    }
    for (const [i, b] of doc.batches.entries()) {
      await at(`batches.${i}`, () => batches.restoreIn(tx, { ...b, org_id: orgId }));
      report.batches++;
    }
    for (const [i, { rules: nodeRules, ...n }] of doc.nodes.entries()) {
      if (n.batch_id !== null && !batchIds.has(n.batch_id)) throw new ValidationError({ [`nodes.${i}.batch_id`]: 'names no batch of the document' });
      await at(`nodes.${i}`, () => nodes.restoreIn(tx, { ...n, org_id: orgId }));
      report.nodes++;
      for (const [j, r] of nodeRules.entries()) {
        await at(`nodes.${i}.rules.${j}`, () => rules.restoreIn(tx, { ...r, node_id: n.id }));
        report.rules++;
      }
    }
    for (const [i, w] of doc.webhooks.entries()) {
      const secret = await at(`webhooks.${i}`, () => webhooks.restoreIn(tx, { ...w, org_id: orgId }));
      report.webhooks.push({ id: w.id, url: w.url, secret });
    }
    return report;
  });
}

/**
 * Runs one entity's write, its errors named by the entity's place in the document: a validation
 * error's fields, or the storage's refusal (an id this instance has already: the document was
 * imported here before).
 */
async function at<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof ValidationError)) throw new Error(`${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    const details = Object.entries(err.details ?? { _: err.message }).map(([field, message]) => [field === '_' ? path : `${path}.${field}`, message]);
    throw new ValidationError(Object.fromEntries(details), err.message);
  }
}
