import { randomInt } from 'node:crypto';
import type { Executor } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError } from '../../platform/errors.ts';
import { encode40 } from './crockford.ts';
import { permute } from './permutation.ts';
import type { SlugsRepo } from './repo.ts';

/** The 40-bit value is (block << 16) | offset: 2^24 blocks of 65,536 slugs. */
export const OFFSET_BITS = 16;
export const BLOCK_SIZE = 2 ** OFFSET_BITS;
export const BLOCK_COUNT = 2 ** 24;

export type SlugSource = 'standalone' | 'leased';

/** Whether a block is held elsewhere (on a remote: leased to one of its sites). */
export type BlockTaken = (db: Executor, block: number) => boolean | Promise<boolean>;

/**
 * Mints slugs from the blocks this instance holds. A standalone instance takes a fresh block at
 * random when it runs out; a site paired with a remote mints only from leased blocks (sync).
 * Call `mint` inside the transaction that creates the node, so a rolled-back create gives its
 * value back and a committed one is never minted again.
 *
 * Many processes on one PostgreSQL database: each minting transaction locks the block it takes
 * an offset from until it ends, and others skip to another block (or claim a fresh one) instead
 * of waiting, so no offset is handed out twice and creates do not queue behind a batch chunk.
 */
export class SlugAllocator {
  private readonly repo: SlugsRepo;
  private readonly clock: Clock;
  private readonly source: () => SlugSource;
  private readonly blockTaken: BlockTaken;

  /**
   * `source`: 'leased' once the instance is paired with a remote (sync): it then mints only from
   * blocks the remote leased or confirmed, and never picks one itself. `blockTaken`: blocks held
   * elsewhere (on a remote: leased to its sites), skipped when picking a block at random.
   */
  constructor(repo: SlugsRepo, clock: Clock, source: () => SlugSource = () => 'standalone', blockTaken: BlockTaken = () => false) {
    this.repo = repo;
    this.clock = clock;
    this.source = source;
    this.blockTaken = blockTaken;
  }

  /** Mints the next slug and records it as belonging to `nodeId` (forever: tombstones stay). */
  async mint(tx: Executor, orgId: string, nodeId: string): Promise<string> {
    for (;;) {
      const { block, offset } = await this.takeOffset(tx);
      const slug = encode40(permute(block * BLOCK_SIZE + offset));
      // Taken only if two instances picked the same block; checked so it can never corrupt data.
      if (await this.repo.record(tx, { slug, org_id: orgId, node_id: nodeId, minted_at: this.now() })) return slug;
    }
  }

  /**
   * Mints a slug for each node, in order, as `mint` one after another would: a run of offsets
   * of one block taken and recorded in a few statements (the node import mints thousands), else
   * (no block with room for the run, a slug taken) one by one.
   */
  async mintMany(tx: Executor, orgId: string, nodeIds: readonly string[]): Promise<string[]> {
    const run = nodeIds.length > 1 ? await this.repo.takeOffset(tx, this.source() === 'leased', true, nodeIds.length) : undefined;
    const slugs: string[] = [];
    if (!run) {
      for (const id of nodeIds) slugs.push(await this.mint(tx, orgId, id));
      return slugs;
    }
    const now = this.now();
    const rows = nodeIds.map((id, i) => ({ slug: encode40(permute(run.block * BLOCK_SIZE + run.offset + i)), org_id: orgId, node_id: id, minted_at: now }));
    const recorded = await this.repo.recordMany(tx, rows);
    for (const row of rows) slugs.push(recorded.has(row.slug) ? row.slug : await this.mint(tx, orgId, row.node_id));
    return slugs;
  }

  /**
   * Records a slug minted elsewhere (an organization imported from another instance keeps its
   * printed URLs) as `nodeId`'s; false when this instance has it already (also as a tombstone).
   */
  claim(tx: Executor, orgId: string, nodeId: string, slug: string): Promise<boolean> {
    return this.repo.record(tx, { slug, org_id: orgId, node_id: nodeId, minted_at: this.now() });
  }

  /** Slugs left in the blocks held now. */
  remaining(db: Executor): Promise<number> {
    return this.repo.remaining(db);
  }

  private async takeOffset(tx: Executor): Promise<{ block: number; offset: number }> {
    const leased = this.source() === 'leased';
    const taken = await this.repo.takeOffset(tx, leased, true);
    if (taken) return taken;
    if (leased) {
      // Every leased block with room may be busy in another process's transaction: wait for one.
      const waited = await this.repo.takeOffset(tx, true, false);
      if (waited) return waited;
      throw new ConflictError('No slugs left in this site\'s reserve: it refills from the remote when online (see GET /v1/sync/status)');
    }
    return { block: await this.claimRandomBlock(tx), offset: 0 };
  }

  private async claimRandomBlock(tx: Executor): Promise<number> {
    for (;;) {
      const block = randomInt(0, BLOCK_COUNT);
      if (await this.blockTaken(tx, block)) continue;
      if (await this.repo.claimBlock(tx, block, this.now())) return block;
    }
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
