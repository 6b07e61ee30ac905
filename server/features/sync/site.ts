import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError } from '../../platform/errors.ts';
import { FORKED_ERROR, type SyncStatusT } from '../../schemas/sync.ts';
import { BLOCK_SIZE, encode40, permute, type SlugSource } from '../slugs/index.ts';
import type { ChangeCapture } from '../../db/changeCapture.ts';
import type { Executor, Store } from '../../db/store.ts';
import type { ChangeApplier } from './apply.ts';
import type { SiteChanges } from './changes.ts';
import { ForkedError, PushGapRemoteError, type RemoteApi, RemoteRefusedError, RemoteUnavailableError } from './client.ts';
import { siteOfWriter } from './conflicts.ts';
import { PushPageSize } from './pushPageSize.ts';
import type { SerialRanges } from './serialRanges.ts';
import type { TemplateLocks } from './templateLocks.ts';
import type { SyncRepo } from './repo.ts';

export const KEYS = {
  siteId: 'sync.site_id',
  incarnation: 'sync.incarnation',
  remoteUrl: 'sync.remote_url',
  token: 'sync.token',
  pendingToken: 'sync.pending_token',
  registered: 'sync.registered_incarnation',
  remoteOrg: 'sync.remote_org',
  instance: 'sync.instance',
} as const;

/** The local organization bound to the remote's (docs/sync.md, "organization mapping"). */
const LOCAL_ORG = 'sync.local_org';

export interface SyncLogger {
  info(message: string): void;
  error(message: string, err?: unknown): void;
}

export interface SiteSyncOptions {
  store: Store;
  repo: SyncRepo;
  clock: Clock;
  logger: SyncLogger;
  /** The remote this site is paired with (from --remote); remembered in settings. */
  remoteUrl?: string | undefined;
  /** Client for the remote; absent when no --remote-key was given (the site stays offline). */
  client?: RemoteApi | undefined;
  /** Blocks with slugs left that the site keeps in reserve (2). */
  reserveBlocks: number;
  /** Shown at the remote (host name by default). */
  siteName: string;
  /** Push/pull (absent in unit tests of the lease slice). */
  replication?: { capture: ChangeCapture; changes: SiteChanges; applier: ChangeApplier; pageSize?: number } | undefined;
}

/** How many minted slugs a block conflict lists in its detail (the count is always exact). */
const CONFLICT_SAMPLE = 20;

/**
 * The site side of sync, first slice: identity (site id + incarnation), pairing with the remote,
 * and the slug reserve leased from it. Once a remote is configured the site mints only from
 * leased blocks (never a block it picked itself), so two sites can never mint the same slug.
 *
 * The `sync.*` settings are kept in memory (loaded by `open`, updated when a write commits), so
 * that what the rest of the app asks synchronously (where slugs come from, the writer id) needs
 * no query.
 */
export class SiteSync {
  private readonly store: Store;
  private readonly repo: SyncRepo;
  private readonly settings = new Map<string, string>();
  private readonly clock: Clock;
  private readonly logger: SyncLogger;
  private client: RemoteApi | undefined;
  /** Derived writes after a pulled page is applied (bound nodes take their templates' locked values). */
  templateLocks: TemplateLocks | null = null;
  /** Batch serial numbering moves past batches that arrive (serialRanges.ts). */
  serialRanges: SerialRanges | null = null;
  readonly reserveBlocks: number;
  private readonly siteName: string;
  private readonly replication: SiteSyncOptions['replication'];
  /** Changes per push page, adapted to how fast the remote applies them. */
  private readonly pushPageSize: PushPageSize;
  /** Called whenever a call to the remote succeeded (a running `POST /sync/run` is making progress). */
  private readonly progressListeners = new Set<() => void>();

  private online: boolean | null = null;
  private lastAttemptAt: string | null = null;
  private lastSuccessAt: string | null = null;
  private lastError: string | null = null;
  private nextAttemptAt: string | null = null;
  /** The remote a runtime pairing (pairing.ts) is registering with, until it answers. */
  private pairingWith: string | null = null;

  private constructor(options: SiteSyncOptions) {
    this.store = options.store;
    this.repo = options.repo;
    this.clock = options.clock;
    this.logger = options.logger;
    this.client = options.client;
    this.reserveBlocks = options.reserveBlocks;
    this.siteName = options.siteName;
    this.replication = options.replication;
    this.pushPageSize = new PushPageSize(options.replication?.pageSize ?? 1000);
  }

  /** Gives the instance its site id and incarnation (once, whichever process is first), remembers the remote. */
  static async open(options: SiteSyncOptions): Promise<SiteSync> {
    const site = new SiteSync(options);
    const { repo, store } = site;
    await store.transaction(async (tx) => {
      // ensureSetting: processes starting together on one database agree on one identity.
      await repo.ensureSetting(tx, KEYS.siteId, randomUUID());
      await repo.ensureSetting(tx, KEYS.incarnation, randomUUID());
      if (options.remoteUrl !== undefined) {
        const wanted = options.remoteUrl.replace(/\/+$/, '');
        const paired = await repo.getSetting(tx, KEYS.remoteUrl);
        if (paired && paired !== wanted) {
          throw new Error(`This data directory is paired with ${paired}; pairing it with ${wanted} instead is not supported`);
        }
        if (!paired) await repo.setSetting(tx, KEYS.remoteUrl, wanted);
      }
      for (const [k, v] of await repo.syncSettings(tx)) site.settings.set(k, v);
      if (site.replication && !(await site.replication.changes.hasScanEpoch(tx))) await site.replication.changes.startScanEpoch(tx, site.writer);
    });
    if (site.replication) site.replication.capture.writer = site.writer;
    return site;
  }

  /** A sync setting as last committed. */
  private setting(key: string): string | undefined {
    return this.settings.get(key);
  }

  /** Writes a sync setting; the copy in memory follows when `db`'s transaction commits. */
  async setSetting(db: Executor, key: string, value: string | null): Promise<void> {
    if (value === null) await this.repo.deleteSetting(db, key);
    else await this.repo.setSetting(db, key, value);
    const apply = () => (value === null ? this.settings.delete(key) : this.settings.set(key, value));
    if (db === this.store.db) apply();
    else this.store.afterCommit(db, apply);
  }

  /** The id this copy's changes carry: site_id/incarnation. */
  get writer(): string {
    return `${this.siteId}/${this.incarnation}`;
  }

  get siteId(): string {
    return this.setting(KEYS.siteId)!;
  }

  get incarnation(): string {
    return this.setting(KEYS.incarnation)!;
  }

  get remoteUrl(): string | null {
    return this.setting(KEYS.remoteUrl) ?? null;
  }

  /** Paired (or pairing) sites mint only from leases; others pick blocks themselves. */
  slugSource = (): SlugSource => (this.remoteUrl || this.pairingWith ? 'leased' : 'standalone');

  /** Whether the worker has something to talk to. */
  canSync(): boolean {
    return this.remoteUrl !== null && this.client !== undefined;
  }

  isRegistered(): boolean {
    return this.setting(KEYS.registered) === this.incarnation;
  }

  /** Blocks to ask for to get back to the reserve target. */
  async wantedBlocks(): Promise<number> {
    return Math.max(0, this.reserveBlocks - (await this.repo.activeLeased(this.store.db)).blocks);
  }

  async needsWork(): Promise<boolean> {
    return this.canSync() && (!this.isRegistered() || (await this.wantedBlocks()) > 0 || (await this.pendingChanges()) > 0);
  }

  /**
   * Refuses (409) work that needs `count` new slugs when the reserve cannot cover it, counting
   * slugs already promised to batches still generating. Standalone instances never refuse.
   */
  assertCanMint = async (db: Executor, count: number): Promise<void> => {
    if (this.slugSource() === 'standalone') return;
    this.assertReserveCovers((await this.repo.activeLeased(db)).slugs - (await this.repo.pendingBatchDemand(db)), count);
  };

  /** The refusal of assertCanMint, for `available` slugs. */
  assertReserveCovers(available: number, count: number): void {
    if (available >= count) return;
    const where = this.isRegistered() ? `it refills from ${this.remoteUrl} when online` : `this site is not paired with ${this.remoteUrl ?? this.pairingWith} yet`;
    throw new ConflictError(
      available <= 0
        ? `No slugs left in this site's reserve: ${where} (see GET /v1/sync/status)`
        : `This site's slug reserve has ${available} slugs left, not enough for ${count}: ${where} (see GET /v1/sync/status)`,
    );
  }

  /**
   * The first of `quantity` serials for `prefix`, reserved at the remote; `local` when this
   * instance numbers its own (not a paired site, another organization than the bound one);
   * `offline` when a paired site cannot get them from its remote (not registered yet, or the call
   * failed): numbered here, provisionally, as they may repeat another site's (push logs a
   * `serial_clash`).
   */
  async remoteSerials(orgId: string, prefix: string, quantity: number): Promise<number | 'local' | 'offline'> {
    if (this.slugSource() === 'standalone') return 'local';
    if ((await this.boundOrg(this.store.db)) !== orgId) return 'local';
    if (!this.canSync() || !this.isRegistered() || !this.client?.serials) return 'offline';
    try {
      return (await this.client.serials({ prefix, quantity })).serial_start;
    } catch (err) {
      this.logger.info(`sync: serials for ${prefix} numbered here, not by the remote (provisional): ${err instanceof Error ? err.message : String(err)}`);
      return 'offline';
    }
  }

  /** `listener` is called after each page pushed or pulled; answers a function that unsubscribes. */
  onProgress(listener: () => void): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  private progressed(): void {
    for (const listener of this.progressListeners) listener();
  }

  /** Gives up on the calls to the remote in flight (a `POST /sync/run` past its bound). */
  giveUp(reason: string): void {
    this.client?.giveUp?.(reason);
  }

  /**
   * One round with the remote: register this incarnation (claiming blocks taken before pairing)
   * if not done yet, then top the reserve up. Throws when the remote cannot be reached.
   */
  async step(): Promise<void> {
    if (!this.canSync()) return;
    this.client?.resume?.();
    this.lastAttemptAt = this.now();
    try {
      try {
        await this.round();
      } catch (err) {
        if (!(err instanceof ForkedError)) throw err;
        // Another copy of this data has talked to the remote since our last call (this copy is the
        // stale one), or the remote has no record of us: abandon the blocks, pair again.
        await this.startNewIncarnation(
          err.message === FORKED_ERROR ? 'the remote says another copy of this data has used this incarnation' : 'the remote has no record of this incarnation',
        );
        await this.round();
      }
      this.online = true;
      this.lastSuccessAt = this.now();
      this.lastError = null;
    } catch (err) {
      // A refusal is still an answer: only an unreachable remote means offline.
      this.online = !(err instanceof RemoteUnavailableError);
      this.lastError = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  /**
   * Registers if needed, then always makes a lease call: it tops the reserve up, or with want 0
   * only renews the fencing token, so a forked copy of the data is caught at its first contact
   * and `online` reflects a real exchange with the remote.
   */
  private async round(): Promise<void> {
    if (!this.isRegistered()) await this.register();
    if (this.replication) {
      await this.push();
      await this.pull();
      await this.sendResolutions();
    }
    await this.topUp();
  }

  /**
   * Pushes everything pending, page by page. Each page is one remote transaction; the site marks
   * rows pushed only after the acknowledgement, so a lost answer means the same page again, which
   * the remote skips by seq.
   */
  private async push(): Promise<void> {
    const { changes } = this.replication!;
    const orgId = await this.store.transaction((tx) => this.localOrg(tx));
    for (;;) {
      const pageSize = this.pushPageSize.current;
      const page = await changes.nextChanges(orgId, pageSize);
      // Scans go once the changes before them are through (their nodes must exist at the remote).
      const scans = page.length < pageSize && (await changes.pendingCount(orgId)) === page.length ? await changes.nextScans(orgId, pageSize * 5) : [];
      if (page.length === 0 && scans.length === 0) return;
      const incarnation = this.incarnation;
      const nextToken = await this.pendingToken();
      let result;
      const startedAt = performance.now();
      try {
        result = await this.client!.push({
          site_id: this.siteId,
          incarnation,
          token: this.setting(KEYS.token) ?? null,
          next_token: nextToken,
          after_seq: await changes.ackedSeq(),
          changes: page,
          scans: scans.map(({ local: _local, ...s }) => s),
        });
      } catch (err) {
        if (!(err instanceof PushGapRemoteError)) {
          this.pushPageSize.shrink();
          throw err;
        }
        await this.store.transaction((tx) => changes.rewind(tx, err.expected));
        this.logger.info(`sync: the remote expects changes after ${err.expected}; pushing again from there`);
        continue;
      }
      await this.store.transaction(async (tx) => {
        if (this.incarnation !== incarnation) return;
        await changes.markPushed(tx, result.acked_seq, scans.length ? scans[scans.length - 1]!.local : null);
        await this.acceptToken(tx, nextToken);
      });
      // Refused scans are not sent again (their node is not the remote's to count): say so once.
      const refused = result.scans_refused ?? [];
      if (refused.length > 0) this.logger.info(`sync: the remote refused ${refused.length} scan(s): ${[...new Set(refused.map((r) => r.reason))].join(', ')}`);
      this.pushPageSize.took(performance.now() - startedAt);
      this.progressed();
      if (page.length < pageSize && scans.length < pageSize * 5) return;
    }
  }

  /** Pulls the remote's feed; each page is applied and its cursor stored in one transaction. */
  private async pull(): Promise<void> {
    const { applier, pageSize = 1000 } = this.replication!;
    for (;;) {
      const page = await this.client!.changes({
        cursor: this.setting('sync.cursor'),
        limit: pageSize,
        site_id: this.siteId,
        incarnation: this.incarnation,
      });
      await this.store.transaction(async (tx) => {
        const orgId = await this.localOrg(tx);
        const at = this.now();
        // What the remote found in this site's pushes (e.g. an edit that lost to a delete made
        // elsewhere): logged here too, so the site's console shows it. First, so that the same
        // conflict found again below while applying merges into the remote's entry.
        for (const c of page.conflicts ?? []) await this.repo.insertConflict(tx, c.kind, { ...c.detail, found_at: 'remote' }, c.detected_at, orgId, c.id);
        const conflict = async (kind: string, detail: Record<string, unknown>) => {
          // Another site's edit lost to a delete: that site and the remote log it, not every
          // instance that pulls the two changes.
          if (kind === 'edit_after_delete' && siteOfWriter(detail.writer) !== this.siteId) return;
          await this.repo.insertConflict(tx, kind, detail, at, orgId);
        };
        for (const change of page.changes) await applier.apply(tx, change, { orgId, now: at, conflict });
        await this.templateLocks?.afterApply(tx, orgId, page.changes, at);
        await this.serialRanges?.afterApply(tx, orgId, page.changes);
        await this.setSetting(tx, 'sync.cursor', page.next_cursor);
      });
      this.progressed();
      if (!page.more) return;
    }
  }

  /**
   * Conflicts resolved here that the remote logged too (it sent them down) are resolved there as
   * well. One the remote no longer has (restored from a backup) counts as done. And the other way
   * round: those still open here that the remote has resolved are resolved here (one call, made
   * only while some are open).
   */
  private async sendResolutions(): Promise<void> {
    const orgId = await this.store.transaction((tx) => this.localOrg(tx));
    for (const { id, remote_id } of await this.repo.resolutionsToSend(this.store.db, orgId)) {
      try {
        await this.client!.resolveConflict(remote_id);
      } catch (err) {
        if (!(err instanceof RemoteRefusedError && err.status === 404)) throw err;
      }
      await this.store.transaction((tx) => this.repo.markResolvedAtRemote(tx, id, this.now()));
    }
    const open = await this.repo.openWithRemoteId(this.store.db, orgId);
    if (open.length === 0) return;
    const resolvedThere = new Set((await this.client!.conflicts()).filter((c) => c.resolved_at !== null).map((c) => c.id));
    const done = open.filter((c) => resolvedThere.has(c.remote_id));
    if (done.length === 0) return;
    await this.store.transaction(async (tx) => {
      for (const { id } of done) await this.repo.resolvedByRemote(tx, id, this.now());
    });
  }

  /** Changes of the bound organization waiting to be pushed (0 while no organization is bound). */
  private async pendingChanges(): Promise<number> {
    const org = this.replication ? await this.boundOrg(this.store.db) : null;
    return org ? this.replication!.changes.pendingCount(org) : 0;
  }

  /** The organization bound to the remote's: sync.local_org, or the only one there is; else null. */
  private async boundOrg(db: Executor): Promise<string | null> {
    const bound = this.setting(LOCAL_ORG);
    if (bound) return bound;
    const orgs = await this.repo.orgIds(db);
    return orgs.length === 1 ? orgs[0]! : null;
  }

  /** The local organization bound to the remote's, recorded at first use; throws if it is ambiguous. */
  async localOrg(tx: Executor): Promise<string> {
    const org = await this.boundOrg(tx);
    if (!org) throw new Error('This instance has several organizations: set sync.local_org to the one paired with the remote');
    if (this.setting(LOCAL_ORG) === undefined) await this.setSetting(tx, LOCAL_ORG, org);
    return org;
  }

  /** Binds `orgId` to the remote's organization unless one is bound already (runtime pairing). */
  async bindOrgIfUnbound(tx: Executor, orgId: string): Promise<void> {
    if (!this.setting(LOCAL_ORG)) await this.setSetting(tx, LOCAL_ORG, orgId);
  }

  /** Set by the worker: when it will try again. */
  noteNextAttempt(at: number | null): void {
    this.nextAttemptAt = at === null ? null : new Date(at).toISOString();
  }

  /**
   * Abandons every block this copy of the data could still mint from (another copy may mint from
   * them too) and takes a new incarnation, which has to register and lease fresh blocks.
   */
  async startNewIncarnation(reason: string): Promise<string> {
    const incarnation = randomUUID();
    await this.store.transaction(async (tx) => {
      const at = this.now();
      const old = this.incarnation;
      for (const { block, next_offset } of await this.repo.openBlocks(tx)) {
        await this.repo.setBlockState(tx, block, old, 'retired', next_offset, reason, at);
        await this.repo.exhaustBlock(tx, block);
      }
      await this.setSetting(tx, KEYS.incarnation, incarnation);
      await this.setSetting(tx, KEYS.token, null);
      await this.setSetting(tx, KEYS.pendingToken, null);
      await this.setSetting(tx, KEYS.registered, null);
      await this.replication?.changes.startScanEpoch(tx, `${this.siteId}/${incarnation}`);
      await this.replication?.changes.rewindAll(tx);
    });
    if (this.replication) this.replication.capture.writer = this.writer;
    this.logger.info(`sync: new incarnation ${incarnation} (${reason}); blocks held so far are retired`);
    return incarnation;
  }

  /** `orgId`: whose conflicts to list (the caller's; every organization's without it). */
  async status(orgId?: string): Promise<SyncStatusT> {
    const reserve = await this.repo.activeLeased(this.store.db);
    const org = this.setting(KEYS.remoteOrg);
    const paired = this.remoteUrl !== null;
    return {
      mode: paired ? 'site' : 'standalone',
      remote: this.remoteUrl,
      paired: paired && this.isRegistered(),
      remote_org: org ? (JSON.parse(org) as { id: string; name: string }) : null,
      site_id: this.siteId,
      incarnation: this.incarnation,
      online: paired ? this.online : null,
      last_attempt_at: this.lastAttemptAt,
      last_success_at: this.lastSuccessAt,
      last_error: paired && !this.client ? 'No remote key given (--remote-key or WAYMARK_REMOTE_KEY): the site cannot reach its remote' : this.lastError,
      next_attempt_at: this.nextAttemptAt,
      reserve: { slugs_left: paired ? reserve.slugs : 0, blocks: paired ? reserve.blocks : 0, target_blocks: paired ? this.reserveBlocks : 0 },
      pending_changes: paired ? await this.pendingChanges() : 0,
      conflicts: (await this.conflicts(orgId)).filter((c) => c.resolved_at === null),
    };
  }

  /** The conflicts `orgId` may see: its own and the instance's (block conflicts); all without `orgId`. */
  async conflicts(orgId?: string) {
    return (await this.repo.conflicts(this.store.db, orgId)).map((c) => ({
      id: c.id,
      kind: c.kind,
      detail: JSON.parse(c.detail_json) as Record<string, unknown>,
      detected_at: c.detected_at,
      resolved_at: c.resolved_at,
    }));
  }

  async resolveConflict(orgId: string, id: number) {
    await this.repo.resolveConflict(this.store.db, id, this.now(), orgId);
    return (await this.conflicts(orgId)).find((c) => c.id === id);
  }

  /**
   * Runtime pairing (pairing.ts): registers this incarnation with `url` through `client`. While
   * the call is out, slugs come from leases only (none yet, so creation is refused for that
   * moment): no block can be picked that the claims would miss. Only if the remote accepts are
   * the remote remembered and `keep` called (storing the key), in the transaction that records
   * the registration; then the site uses `client`.
   */
  async pairWith(url: string, client: RemoteApi, keep: (tx: Executor) => Promise<void>): Promise<void> {
    this.pairingWith = url;
    try {
      await this.register(client, { url, keep });
    } finally {
      this.pairingWith = null;
    }
    // A new incarnation started while the call was out (copy detection): nothing was stored.
    if (this.remoteUrl !== url) throw new ConflictError('Pairing interrupted: this instance started a new incarnation meanwhile; pair again');
    this.client = client;
  }

  private async register(client = this.client!, pairing?: { url: string; keep: (tx: Executor) => Promise<void> }): Promise<void> {
    const incarnation = this.incarnation;
    const nextToken = await this.pendingToken();
    const result = await client.register({
      site_id: this.siteId,
      incarnation,
      name: this.siteName,
      token: this.setting(KEYS.token) ?? null,
      next_token: nextToken,
      claims: await this.repo.claimableBlocks(this.store.db),
    });
    await this.store.transaction(async (tx) => {
      if (this.incarnation !== incarnation) return;
      const at = this.now();
      for (const block of result.claims.accepted) {
        await this.repo.confirmLocalBlock(tx, block);
        // A retired block is recorded at the remote but stays retired here (no more slugs from it).
        if ((await this.repo.blockState(tx, block))?.state !== 'retired') await this.repo.setBlockState(tx, block, incarnation, 'leased', null, 'claimed at pairing', at);
      }
      for (const { block, reason } of result.claims.rejected) {
        const prior = await this.repo.blockState(tx, block);
        // Retired here and held by the incarnation that retired it: nothing new.
        if (prior?.state === 'retired' && reason === 'held_by_other_incarnation') continue;
        const used = prior?.state === 'retired' ? (prior.used ?? 0) : await this.repo.exhaustBlock(tx, block);
        await this.repo.setBlockState(tx, block, incarnation, 'dropped', used, reason, at);
        // Another incarnation of this same site holds it: our slugs from it are copies of its nodes.
        if (used > 0 && reason !== 'held_by_other_incarnation') {
          const sample = Array.from({ length: Math.min(used, CONFLICT_SAMPLE) }, (_, i) => encode40(permute(block * BLOCK_SIZE + i)));
          await this.repo.insertConflict(tx, 'block_conflict', { block, reason, slugs_minted: used, first_slugs: sample }, at, null);
          this.logger.error(`sync: block ${block} was taken by this instance before pairing but ${reason}; ${used} slugs minted from it may be duplicated`);
        }
      }
      await this.setSetting(tx, KEYS.remoteOrg, JSON.stringify(result.org));
      await this.setSetting(tx, KEYS.registered, incarnation);
      await this.acceptToken(tx, nextToken);
      if (pairing) {
        await this.setSetting(tx, KEYS.remoteUrl, pairing.url);
        await pairing.keep(tx);
      }
    });
    this.logger.info(`sync: site ${this.siteId} (incarnation ${incarnation}) paired with ${this.remoteUrl} for ${result.org.name}`);
  }

  private async topUp(): Promise<void> {
    const incarnation = this.incarnation;
    const nextToken = await this.pendingToken();
    const result = await this.client!.lease({
      site_id: this.siteId,
      incarnation,
      token: this.setting(KEYS.token) ?? null,
      next_token: nextToken,
      want: await this.wantedBlocks(),
    });
    await this.store.transaction(async (tx) => {
      if (this.incarnation !== incarnation) return;
      const at = this.now();
      for (const block of result.blocks) {
        await this.repo.adoptLeasedBlock(tx, block, at);
        await this.repo.setBlockState(tx, block, incarnation, 'leased', null, null, at);
      }
      await this.acceptToken(tx, nextToken);
    });
  }

  /**
   * The next fencing token, stored before the call that presents it: a call cut off after the
   * remote applied it is retried with the same token and gets the same answer.
   */
  private async pendingToken(): Promise<string> {
    let token = this.setting(KEYS.pendingToken);
    if (!token) {
      token = randomBytes(16).toString('base64url');
      await this.setSetting(this.store.db, KEYS.pendingToken, token);
    }
    return token;
  }

  private async acceptToken(tx: Executor, token: string): Promise<void> {
    await this.setSetting(tx, KEYS.token, token);
    await this.setSetting(tx, KEYS.pendingToken, null);
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
