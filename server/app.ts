import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SqliteStore } from './db/sqliteStore.ts';
import type { Store } from './db/store.ts';
import type { Express } from 'express';
import type { Registry } from 'prom-client';
import type { AppConfig } from './config.ts';
import { createHttpApp } from './http/api.ts';
import { mountConsole } from './http/console.ts';
import { createMetrics, mountMetrics } from './http/metrics.ts';
import { MemoryRateLimiter } from './http/rateLimit.ts';
import { RateLimitRepo } from './http/rateLimitRepo.ts';
import { SharedRateLimiter } from './http/sharedRateLimit.ts';
import type { AnyRouteSpec } from './http/route.ts';
import type { Clock } from './platform/clock.ts';
import { StorageHealth } from './http/storageHealth.ts';
import { Outbox } from './platform/outbox.ts';
import { OutboxPruner } from './platform/outboxPruner.ts';
import { defaultSecretStore, type SecretStore } from './platform/secrets.ts';
import { InstanceKeys, rootKeyOf, WEBHOOK_DATA_KEY_SECRET } from './platform/instanceKeys.ts';
import { batchRoutes } from './features/batches/index.ts';
import { KeysRepo, keyRoutes, KeyService } from './features/keys/index.ts';
import { importExportRoutes, nodeRoutes } from './features/nodes/index.ts';
import { organizationRoutes } from './features/organization/index.ts';
import { printingRoutes, qrStyleRoutes } from './features/printing/index.ts';
import { ruleRoutes } from './features/rules/index.ts';
import { instanceRoutes } from './features/instance/routes.ts';
import { createSync } from './features/sync/index.ts';
import { syncRoutes } from './features/sync/routes.ts';
import { templateRoutes } from './features/templates/index.ts';
import { createScanHandler } from './features/scans/handler.ts';
import { PasswordAttempts } from './features/scans/passwordAttempts.ts';
import { postgresScanStorage } from './features/scans/postgresStorage.ts';
import { sqliteScanStorage } from './features/scans/sqliteStorage.ts';
import type { PostgresStore } from './db/postgresStore.ts';
import { ScanAnalytics } from './features/scans/analytics.ts';
import { scanRoutes } from './features/scans/routes.ts';
import { createWebhooks, subscriptionCheck } from './features/webhooks/index.ts';
import { createTapProofs, NTAG21X_KIND, NTAG424_KIND, tapProofRoutes } from './features/tapproofs/index.ts';
import { type NfcDevice, nfcRoutes } from './features/nfc/index.ts';
import { createNodeServices } from './nodeServices.ts';

export interface Logger {
  info(message: string): void;
  error(message: string, err?: unknown): void;
}

export const consoleLogger: Logger = {
  info: (m) => console.log(m),
  error: (m, err) => (err === undefined ? console.error(m) : console.error(m, err)),
};

export interface CreateAppOptions {
  /** The database (server/db/store.ts): SQLite embedded, or PostgreSQL for the central tier. */
  store: Store;
  clock: Clock;
  config: AppConfig;
  logger?: Logger;
  /** The NFC reader bridge (serve.ts starts one); without it the NFC API reports NFC unavailable. */
  nfc?: NfcDevice | null;
  /** Label layouts and the caption font (default: the repository's resources/; Electron passes its own). */
  resourcesDir?: string;
  /** Credentials kept outside the database (a paired site's remote key); default: `<dataDir>/secrets.json`, mode 0600. */
  secrets?: SecretStore;
  /**
   * Where organization master keys for tap proofs are kept (docs/nfc.md "Keys"); default: `secrets`.
   * On PostgreSQL every process must be given the same store (`waymark serve --tap-proof-keys`).
   */
  tapProofKeys?: SecretStore;
  /** How scan commits reach the disk (scans/handler.ts `flush`; default off-thread). */
  scanFlush?: 'off-thread' | 'in-commit';
}

/** A background worker the app starts and stops with itself. */
export interface Worker {
  start(): void;
  stop(): Promise<void>;
}

export interface App {
  /** The request listener for http.createServer. */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** Starts background workers (batch generation, …). */
  start(): void;
  /** Stops workers; the caller closes the HTTP server and the database. */
  stop(): Promise<void>;
  services: Awaited<ReturnType<typeof createServices>>;
  express: Express;
  /** Prometheus registry behind /metrics; features may add their own metrics. */
  metrics: Registry;
  routes: readonly AnyRouteSpec[];
}

async function createServices(
  store: Store,
  clock: Clock,
  config: AppConfig,
  logger: Logger,
  nfcDevice: NfcDevice | null = null,
  resourcesDir?: string,
  secrets: SecretStore = defaultSecretStore(config.dataDir),
  tapProofKeys: SecretStore = secrets,
) {
  const outbox = new Outbox({ store, clock, subscribed: subscriptionCheck(store.dialect) });
  // Keys the instance makes for itself: kept in the secret store, or derived from the operator's
  // root key where processes share a PostgreSQL database (platform/instanceKeys.ts).
  const rootKey = rootKeyOf(secrets);
  const webhookCipher = new InstanceKeys(secrets, rootKey).cipher(WEBHOOK_DATA_KEY_SECRET);
  // Sync (pairing, slug leases) comes first: it decides where slugs come from.
  const sync = await createSync({
    store,
    clock,
    outbox,
    logger,
    dataDir: config.dataDir,
    databaseFile: store instanceof SqliteStore ? store.connection.name : undefined,
    secrets,
    cipher: webhookCipher,
    config: config.sync,
  });
  const keys = new KeyService(store, new KeysRepo(), clock);
  const tapProofs = createTapProofs({ store, clock, keyStore: tapProofKeys });
  const { organizations, slugs, nodes, importer, templates, rules, batches, generator, print, qrStyles, nfc } = createNodeServices({
    store,
    clock,
    outbox,
    scanBase: config.scanBase,
    apiBase: `${config.publicUrl}/v1`,
    resourcesDir,
    nfcDevice,
    // Personalising an NTAG 424 DNA: keys from the organization master key, the tag registered for scan-time checks.
    nfcTagKeys: {
      current: (orgId) => tapProofs.masterKeys.current(NTAG424_KIND, orgId),
      version: (orgId, version) => tapProofs.masterKeys.version(NTAG424_KIND, orgId, version),
      currentVersion: (orgId) => tapProofs.masterKeys.currentVersion(NTAG424_KIND, orgId),
      checkSun: (orgId, query) => tapProofs.service.checkKind(NTAG424_KIND, orgId, query) ?? { ok: false, reason: 'no_key' },
      register: (tx, tag) => tapProofs.service.registerTag(tx, { ...tag, kind: NTAG424_KIND }),
    },
    // NTAG21x passwords come from a master key kept beside the tap proof keys.
    instanceKeys: new InstanceKeys(tapProofKeys, rootKey),
    slugSource: sync.slugSource,
    blockTaken: sync.blockTaken,
    assertCanMint: (count, db) => sync.assertCanMint(db, count),
    serialsFromRemote: sync.remoteSerials,
    ...(config.batchLeaseMs !== undefined ? { generator: { leaseMs: config.batchLeaseMs } } : {}),
  });
  sync.useTemplateLocks({ nodes, templates });
  sync.useSerialCounters(batches);
  const webhookFeature = createWebhooks({
    store,
    outbox,
    clock,
    settings: config.webhooks,
    version: config.version,
    logger,
    cipher: webhookCipher,
    // A paired site delivers no webhooks: the remote emits the events for what the site pushes,
    // so receivers hear each event once (docs/sync.md).
    enabled: () => sync.site.slugSource() === 'standalone',
    // Pairing is for good (docs/sync.md): a site's own events are never delivered, only pruned.
    neverDelivers: () => sync.site.remoteUrl !== null,
  });
  // Secrets written in clear before sealing existed are sealed before anything reads them.
  await webhookFeature.service.sealStoredSecrets();
  const outboxPruner = new OutboxPruner({ store, outbox, clock, logger, options: config.outboxPrune });
  const webhooks = webhookFeature.service;
  const webhookDispatcher = webhookFeature.dispatcher;
  const analytics = new ScanAnalytics(store, clock);
  // A tag written with the UID + counter mirror is registered as an ntag21x tap evidence tag.
  nfc.useMirrorRegistry((tx, tag) => tapProofs.service.registerTag(tx, { ...tag, kind: NTAG21X_KIND, key_version: 0 }));
  // Webhooks across sites (docs/sync.md): the remote emits the events for what sites push, in
  // the push's transaction.
  sync.remoteChanges.events = {
    applied: async (tx, orgId, change, effect) => {
      await nodes.remoteChangeApplied(tx, orgId, change, effect);
      await batches.remoteChangeApplied(tx, orgId, change, effect);
    },
    scanned: async (tx, orgId, scans) => {
      // As for local scans (scans/writer.ts): no event that no endpoint could ever receive.
      if (!(await outbox.subscribed(tx, orgId, 'node.scanned'))) return;
      for (const s of scans) {
        if (s.is_bot) continue;
        const slug = (await nodes.byId(tx, s.node_id))?.slug;
        await outbox.record(tx, orgId, 'node.scanned', {
          scan_id: s.local,
          node: { id: s.node_id, slug },
          timestamp: new Date(s.ts).toISOString(),
          device_type: s.device_type,
          os: s.os,
          browser: s.browser,
          country: s.country,
          source: s.source,
          rule_id: s.rule_id,
          outcome: s.outcome,
        });
      }
    },
  };
  return { outbox, outboxPruner, organizations, slugs, nodes, importer, templates, rules, batches, keys, generator, print, qrStyles, webhooks, webhookDispatcher, webhookFeature, nfc, sync, analytics, tapProofs: tapProofs.service, tapProofKeys: tapProofs.masterKeys };
}

/**
 * The one factory behind Electron, the headless CLI and the tests: everything it needs is
 * passed in, nothing is module-global.
 */
export async function createApp({ store, clock, config, logger: baseLogger = consoleLogger, nfc = null, resourcesDir, secrets, tapProofKeys, scanFlush }: CreateAppOptions): Promise<App> {
  // Disk-full errors from anywhere (API, scans, workers) are counted in one place, not logged one by one.
  const storage = new StorageHealth(baseLogger, clock);
  const logger = storage.wrap(baseLogger);
  const secretStore = secrets ?? defaultSecretStore(config.dataDir);
  const services = await createServices(store, clock, config, logger, nfc, resourcesDir, secretStore, tapProofKeys ?? secretStore);
  // Budgets in memory for the one process on a SQLite file; in the database where processes share them.
  const rateLimiter = store.dialect === 'postgres' ? new SharedRateLimiter(store.db, new RateLimitRepo(), clock) : new MemoryRateLimiter(clock);
  const routes: AnyRouteSpec[] = [
    // Before nodeRoutes: /nodes/export is not the node with slug "export".
    ...importExportRoutes(services.nodes, services.importer),
    ...nodeRoutes(services.nodes),
    ...ruleRoutes(services.rules, services.nodes),
    ...batchRoutes(services.batches, services.generator, services.print),
    ...printingRoutes(services.print),
    ...templateRoutes(services.templates),
    ...keyRoutes(services.keys),
    ...instanceRoutes(config, services.keys, services.organizations),
    ...organizationRoutes(services.organizations),
    ...qrStyleRoutes(services.qrStyles),
    ...services.webhookFeature.routes(),
    ...nfcRoutes(services.nfc),
    ...tapProofRoutes(services.tapProofs, services.nodes),
    ...syncRoutes(services.sync),
    ...scanRoutes({ nodes: services.nodes, rules: services.rules, analytics: services.analytics, qrStyles: services.qrStyles }),
  ];
  const workers: Worker[] = [
    services.generator,
    services.webhookDispatcher,
    services.sync.worker,
    services.outboxPruner,
    { start: () => services.analytics.start(() => scans.lastScanAt()), stop: () => services.analytics.stop() },
    { start: () => services.nfc.start(), stop: async () => services.nfc.stop() },
  ];
  const metrics = createMetrics(store.db, config.version);
  services.webhookFeature.registerMetrics(metrics);

  const expressApp = createHttpApp({
    routes,
    keys: services.keys,
    rateLimiter,
    trustProxy: config.trustProxy,
    version: config.version,
    logger,
    storage,
    extend: (app) => {
      mountMetrics(app, metrics);
      mountConsole(app, { dir: config.consoleDir });
    },
  });

  // The public scan path (/v/<slug>) is answered before Express: it is the hot path.
  const onScanError = (err: unknown) => logger.error('scan handler failed', err);
  const scans = createScanHandler({
    storage:
      store instanceof SqliteStore
        ? sqliteScanStorage({ db: store.connection, ...(scanFlush ? { flush: scanFlush } : {}), onError: onScanError })
        : postgresScanStorage({ store: store as PostgresStore, subscribed: subscriptionCheck(store.dialect), onError: onScanError }),
    clock,
    config,
    tapProofs: { claims: (query) => services.tapProofs.kindOf(query) !== null, check: (node, query, refusable) => services.tapProofs.check(node, query, refusable) },
    passwordAttempts: new PasswordAttempts(store, { onError: onScanError }),
    onScansRecorded: () => {
      storage.succeeded();
      services.outbox.notifyRecorded();
    },
    onError: onScanError,
  });

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (scans(req, res)) return;
    res.setHeader('X-Request-Id', randomUUID());
    expressApp(req, res);
  };

  return {
    handle,
    start: () => workers.forEach((w) => w.start()),
    stop: async () => {
      // Every worker stops even when one fails (a full disk fails those that write on stop).
      const stopped = await Promise.allSettled(workers.map((w) => w.stop()));
      await scans.close();
      const failed = stopped.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
    services,
    express: expressApp,
    metrics,
    routes,
  };
}
