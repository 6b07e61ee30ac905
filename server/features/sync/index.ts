import { hostname } from 'node:os';
import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { SecretStore } from '../../platform/secrets.ts';
import { captureState } from '../../db/capture.ts';
import { ChangeApplier } from './apply.ts';
import { RemoteChanges, SiteChanges } from './changes.ts';
import type { RemoteApi } from './client.ts';
import { InstanceIdentity } from './identity.ts';
import { Pairing, startupClient } from './pairing.ts';
import { LeaseRegistry } from './registry.ts';
import { ReplicationRepo, SyncRepo } from './repo.ts';
import { SiteSync, type SyncLogger } from './site.ts';
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
  /** Replaces the HTTP client (tests). */
  client?: RemoteApi | undefined;
}

export interface CreateSyncOptions {
  db: Database;
  clock: Clock;
  outbox: Outbox;
  logger: SyncLogger;
  /** Where the database lives; empty for an in-memory instance (no incarnation checks then). */
  dataDir: string;
  /** Where a runtime pairing keeps the remote key (pairing.ts). */
  secrets: SecretStore;
  config?: SyncConfig | undefined;
}

/**
 * Wires the sync feature: the remote-side lease registry (every instance can be a remote), the
 * site side (identity, pairing, slug reserve), its worker, and the instance-identity check that
 * gives a copied or restored data directory a new incarnation before anything is minted.
 */
export function createSync({ db, clock, outbox, logger, dataDir, secrets, config = {} }: CreateSyncOptions) {
  const repo = new SyncRepo(db);
  const registry = new LeaseRegistry(repo, clock);
  const capture = captureState(db);
  capture.now = () => clock.now();
  const rows = new ReplicationRepo(db);
  const applier = new ChangeApplier(rows, capture);
  const changes = new SiteChanges(rows, repo, capture);
  const remoteChanges = new RemoteChanges({ rows, repo, registry, applier, capture, now: () => new Date(clock.now()).toISOString() });
  const initial = config.client ? { client: config.client, from: 'flag' as const } : startupClient(repo, secrets, config);
  const client = initial?.client;
  const site = new SiteSync({
    repo,
    clock,
    logger,
    remoteUrl: config.remoteUrl,
    client,
    reserveBlocks: config.reserveBlocks ?? 2,
    siteName: config.siteName ?? hostname(),
    replication: { capture, changes, applier, pageSize: config.pageSize },
  });
  const identity = dataDir && db.name && db.name !== ':memory:' ? new InstanceIdentity(dataDir, db.name, repo, site) : undefined;
  identity?.check();
  const worker = new SyncWorker(site, clock, logger, config.worker);
  outbox.onRecorded(() => worker.nudge());
  const pairing = new Pairing({ site, repo, worker, secrets, initial });
  return {
    registry,
    remoteChanges,
    site,
    worker: {
      start: () => worker.start(),
      stop: async () => {
        pairing.close();
        await worker.stop();
        identity?.close();
      },
      runNow: () => worker.runNow(),
    },
    identity,
    pairing,
    /** For SlugAllocator: paired sites mint only from leases. */
    slugSource: site.slugSource,
    /** For SlugAllocator: the remote's own blocks never collide with blocks leased to sites. */
    blockTaken: (block: number) => registry.isTaken(block),
    /** For batch creation: 409 when the reserve cannot cover the batch. */
    assertCanMint: site.assertCanMint,
  };
}

export type Sync = ReturnType<typeof createSync>;
