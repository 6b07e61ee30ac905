import { hostname } from 'node:os';
import { changeCapture } from '../../db/changeCapture.ts';
import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SecretCipher } from '../../platform/secretCipher.ts';
import type { SecretStore } from '../../platform/secrets.ts';
import { ChangeApplier } from './apply.ts';
import { RemoteChanges, SiteChanges } from './changes.ts';
import { SealedFields } from './sealedFields.ts';
import { sealLoggedSecrets } from './sealLog.ts';
import type { RemoteApi } from './client.ts';
import { InstanceIdentity } from './identity.ts';
import { Pairing, startupClient } from './pairing.ts';
import { type PruneOptions, SyncPruner } from './prune.ts';
import { LeaseRegistry } from './registry.ts';
import { ReplicationRepo, SyncRepo } from './repo.ts';
import { SiteSync, type SyncLogger } from './site.ts';
import { SerialRanges } from './serialRanges.ts';
import { TemplateLocks } from './templateLocks.ts';
import { SyncWorker, type SyncWorkerOptions } from './worker.ts';

/** Sync settings (serve --remote/--remote-key; the rest for tests and tuning). */
export interface SyncConfig {
  remoteUrl?: string | undefined;
  remoteKey?: string | undefined;
  /** Blocks of 65,536 slugs a site keeps in reserve (default 2). */
  reserveBlocks?: number | undefined;
  siteName?: string | undefined;
  /** Changes per push or pull request (1000). */
  pageSize?: number | undefined;
  worker?: Partial<SyncWorkerOptions> | undefined;
  /** Compaction of the change outbox (prune.ts; docs/sync.md "Compaction"). */
  prune?: Partial<PruneOptions> | undefined;
  /** Replaces the HTTP client (tests). */
  client?: RemoteApi | undefined;
}

export interface CreateSyncOptions {
  store: Store;
  clock: Clock;
  /** Told of every local write (the worker then pushes soon). */
  outbox: { onRecorded(listener: () => void): void };
  logger: SyncLogger;
  /** Where the data lives; empty for an in-memory instance (no incarnation checks then). */
  dataDir: string;
  /** The SQLite database file, for copy detection (identity.ts); absent on PostgreSQL and in memory. */
  databaseFile?: string | undefined;
  /** Where a runtime pairing keeps the remote key (pairing.ts). */
  secrets: SecretStore;
  /** Seals the secrets of synced rows (webhook signing secrets) under this instance's data key. */
  cipher: SecretCipher;
  config?: SyncConfig | undefined;
}

/**
 * Wires the sync feature: the remote-side lease registry (every instance can be a remote), the
 * site side (identity, pairing, slug reserve), its worker, the outbox compaction, and the
 * instance-identity check that gives a copied or restored data directory a new incarnation before
 * anything is minted.
 */
export async function createSync({ store, clock, outbox, logger, dataDir, databaseFile, secrets, cipher, config = {} }: CreateSyncOptions) {
  const repo = new SyncRepo(store.dialect);
  const registry = new LeaseRegistry(store, repo, clock);
  const capture = await changeCapture(store, () => clock.now());
  const rows = new ReplicationRepo(store.dialect);
  const sealed = new SealedFields(cipher);
  await sealLoggedSecrets(store, rows, repo, sealed);
  const applier = new ChangeApplier(rows, capture, sealed);
  const changes = new SiteChanges(store, rows, repo, capture, sealed);
  const remoteChanges = new RemoteChanges({ store, rows, repo, registry, applier, capture, now: () => new Date(clock.now()).toISOString(), sealed });
  const initial = config.client ? { client: config.client, from: 'flag' as const } : await startupClient(store.db, repo, secrets, config);
  const client = initial?.client;
  const site = await SiteSync.open({
    store,
    repo,
    clock,
    logger,
    remoteUrl: config.remoteUrl,
    client,
    reserveBlocks: config.reserveBlocks ?? 2,
    siteName: config.siteName ?? hostname(),
    replication: { capture, changes, applier, pageSize: config.pageSize },
  });
  const identity = dataDir && databaseFile && databaseFile !== ':memory:' ? new InstanceIdentity(dataDir, databaseFile, store.db, repo, site) : undefined;
  await identity?.check();
  const worker = new SyncWorker(site, clock, logger, config.worker);
  outbox.onRecorded(() => worker.nudge());
  const pruner = new SyncPruner({ store, rows, settings: repo, clock, logger, options: config.prune });
  const pairing = new Pairing({ site, worker, secrets, initial });
  return {
    registry,
    remoteChanges,
    site,
    pruner,
    worker: {
      start: () => {
        worker.start();
        pruner.start();
      },
      stop: async () => {
        pairing.close();
        await worker.stop();
        await pruner.stop();
        await identity?.close();
      },
      runNow: () => worker.runNow(),
    },
    identity,
    pairing,
    /** For SlugAllocator: paired sites mint only from leases. */
    slugSource: site.slugSource,
    /** For SlugAllocator: the remote's own blocks never collide with blocks leased to sites. */
    blockTaken: (db: Executor, block: number) => registry.isTaken(db, block),
    /** Once nodes and templates exist: bound nodes take their templates' locked values after sync applies changes. */
    useTemplateLocks(deps: ConstructorParameters<typeof TemplateLocks>[0]): void {
      const locks = new TemplateLocks(deps);
      site.templateLocks = locks;
      remoteChanges.templateLocks = locks;
    },
    /** Once batches exist: serials numbered by the remote (serialRanges.ts). */
    useSerialCounters(counters: ConstructorParameters<typeof SerialRanges>[1]): void {
      const ranges = new SerialRanges(store, counters);
      site.serialRanges = ranges;
      remoteChanges.serialRanges = ranges;
    },
    /** For batch creation, before its transaction: serials from the remote on a paired site online (else who numbers them here). */
    remoteSerials: (orgId: string, prefix: string, quantity: number) => site.remoteSerials(orgId, prefix, quantity),
    /** For batch creation, in its transaction: 409 when the reserve cannot cover the batch. */
    assertCanMint: site.assertCanMint,
  };
}

export type Sync = Awaited<ReturnType<typeof createSync>>;
