/**
 * Wiring of the features that make and change nodes (nodes, slugs, templates, rules, batches,
 * printing, NFC): their services call each other inside one another's transactions. Used by
 * app.ts and by tests and tools that run these features on a store of their own.
 */
import type { Executor, Store } from './db/store.ts';
import type { Clock } from './platform/clock.ts';
import type { Outbox } from './platform/outbox.ts';
import type { InstanceKeys } from './platform/instanceKeys.ts';
import type { TagProtection } from './schemas/nfc.ts';
import { BatchGenerator, type BatchGeneratorOptions, BatchesRepo, BatchService, type RemoteSerials } from './features/batches/index.ts';
import { type NfcDevice, NfcRepo, NfcService, type NfcTagKeys, TagPasswords } from './features/nfc/index.ts';
import { NodeImporter, NodesRepo, NodeService } from './features/nodes/index.ts';
import { OrganizationService, OrganizationSettingsRepo } from './features/organization/index.ts';
import { defaultResourcesDir, loadPrintResources, PrintersRepo, PrintService, QrStyleRepo, QrStyleService } from './features/printing/index.ts';
import { RulesRepo, RuleService } from './features/rules/index.ts';
import { type BlockTaken, SlugAllocator, type SlugSource, SlugsRepo } from './features/slugs/index.ts';
import { TemplatesRepo, TemplateService } from './features/templates/index.ts';

export interface NodeServicesDeps {
  store: Store;
  clock: Clock;
  outbox: Outbox;
  /** The instance's default `{scan_base}` (an organization may set its own): node URLs are `{scan_base}/v/<slug>`. */
  scanBase: string;
  /** `{base_url}/v1`, used in the manifest_url of events. */
  apiBase: string;
  /** Label layouts and the caption font (default: the repository's resources/). */
  resourcesDir?: string | undefined;
  nfcDevice?: NfcDevice | null | undefined;
  /** NTAG 424 DNA keys and per-tag state for the NFC feature (the tap proofs feature). */
  nfcTagKeys?: NfcTagKeys | null;
  /** The NFC tag master keys (NTAG21x passwords): stored, or derived from the root key; without them tags cannot be protected. */
  instanceKeys?: InstanceKeys | undefined;
  /** Where slugs come from (sync: a paired site mints only from leases). */
  slugSource?: () => SlugSource;
  blockTaken?: BlockTaken;
  /** Throws (409) when the slug source cannot cover a batch (sync). */
  assertCanMint?: (count: number, db: Executor) => void | Promise<void>;
  serialsFromRemote?: (orgId: string, prefix: string, quantity: number) => Promise<RemoteSerials>;
  generator?: BatchGeneratorOptions;
}

export function createNodeServices(deps: NodeServicesDeps) {
  const { store, clock, outbox } = deps;
  const templatesRepo = new TemplatesRepo();
  const slugs = new SlugAllocator(new SlugsRepo(store.dialect), clock, deps.slugSource, deps.blockTaken);
  const organizations = new OrganizationService({ store, clock, repo: new OrganizationSettingsRepo(), instanceScanBase: deps.scanBase });
  const scanBase = (db: Executor, orgId: string) => organizations.scanBase(orgId, db);
  const nodes = new NodeService({ store, clock, outbox, nodes: new NodesRepo(store.dialect), templates: templatesRepo, slugs, scanBase });
  const importer = new NodeImporter({ store, nodes, templates: templatesRepo });
  const templates = new TemplateService({ store, clock, templates: templatesRepo, nodes });
  const rules = new RuleService({ store, clock, rules: new RulesRepo(), nodeService: nodes });
  const batches = new BatchService({
    store,
    clock,
    outbox,
    batches: new BatchesRepo(store.dialect),
    templates: templatesRepo,
    nodes,
    apiBase: deps.apiBase,
    // The NFC service is made below (it needs this one); called only once both exist.
    tagProtection: (db, rows): Promise<Map<string, TagProtection>> => nfc.tagProtections(db, rows),
    ...(deps.assertCanMint ? { assertCanMint: deps.assertCanMint } : {}),
    ...(deps.serialsFromRemote ? { serialsFromRemote: deps.serialsFromRemote } : {}),
  });
  // On PostgreSQL other processes generate from the same database: batches are leased.
  const generator = new BatchGenerator(batches, clock, { shared: store.dialect === 'postgres', ...deps.generator });
  const printResources = loadPrintResources(deps.resourcesDir ?? defaultResourcesDir());
  const qrStyles = new QrStyleService({ store, clock, repo: new QrStyleRepo(), fontFile: printResources.fontFile });
  const print = new PrintService({ store, clock, batches, nodes, printers: new PrintersRepo(), qrStyles, layouts: printResources.layouts, font: printResources.font });
  const nfc = new NfcService({ store, clock, outbox, repo: new NfcRepo(), nodeService: nodes, batchService: batches,
    device: deps.nfcDevice ?? null,
    tagKeys: deps.nfcTagKeys ?? null,
    passwords: deps.instanceKeys ? new TagPasswords(deps.instanceKeys) : undefined,
  });
  return { organizations, slugs, nodes, importer, templates, rules, batches, generator, print, qrStyles, nfc };
}

export type NodeServices = ReturnType<typeof createNodeServices>;
