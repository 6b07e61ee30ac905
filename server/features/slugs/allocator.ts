import { randomInt } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError } from '../../platform/errors.ts';
import { encode40 } from './crockford.ts';
import { permute } from './permutation.ts';

/** The 40-bit value is (block << 16) | offset: 2^24 blocks of 65,536 slugs. */
export const OFFSET_BITS = 16;
export const BLOCK_SIZE = 2 ** OFFSET_BITS;
export const BLOCK_COUNT = 2 ** 24;

export type SlugSource = 'standalone' | 'leased';

/**
 * Mints slugs from the blocks this instance holds. A standalone instance takes a fresh block at
 * random when it runs out; a site paired with a remote mints only from leased blocks (sync).
 * Call `mint` inside the transaction that creates the node, so a rolled-back create gives its
 * value back and a committed one is never minted again.
 */
export class SlugAllocator {
  private readonly current;
  private readonly currentLeased;
  private readonly advance;
  private readonly claim;
  private readonly blockExists;
  private readonly record;
  private readonly exists;

  private readonly db: Database;
  private readonly clock: Clock;
  private readonly source: () => SlugSource;
  private readonly blockTaken: (block: number) => boolean;

  /**
   * `source`: 'leased' once the instance is paired with a remote (sync): it then mints only from
   * blocks the remote leased or confirmed, and never picks one itself. `blockTaken`: blocks held
   * elsewhere (on a remote: leased to its sites), skipped when picking a block at random.
   */
  constructor(
    db: Database,
    clock: Clock,
    source: () => SlugSource = () => 'standalone',
    blockTaken: (block: number) => boolean = () => false,
  ) {
    this.db = db;
    this.clock = clock;
    this.source = source;
    this.blockTaken = blockTaken;
    this.current = db.prepare(
      `SELECT block, next_offset FROM slug_blocks WHERE next_offset < ${BLOCK_SIZE} ORDER BY acquired_at, block LIMIT 1`,
    );
    this.currentLeased = db.prepare(
      `SELECT block, next_offset FROM slug_blocks WHERE next_offset < ${BLOCK_SIZE} AND source = 'lease' ORDER BY acquired_at, block LIMIT 1`,
    );
    this.advance = db.prepare('UPDATE slug_blocks SET next_offset = next_offset + 1 WHERE block = ?');
    this.claim = db.prepare("INSERT INTO slug_blocks (block, next_offset, source, acquired_at) VALUES (?, 0, 'local', ?)");
    this.blockExists = db.prepare('SELECT 1 FROM slug_blocks WHERE block = ?');
    this.record = db.prepare('INSERT INTO slugs (slug, org_id, node_id, minted_at) VALUES (?, ?, ?, ?)');
    this.exists = db.prepare('SELECT 1 FROM slugs WHERE slug = ?');
  }

  /** Mints the next slug and records it as belonging to `nodeId` (forever: tombstones stay). */
  mint(orgId: string, nodeId: string): string {
    const leased = this.source() === 'leased';
    let row = (leased ? this.currentLeased : this.current).get() as { block: number; next_offset: number } | undefined;
    if (!row) {
      if (leased) {
        throw new ConflictError('No slugs left in this site\'s reserve: it refills from the remote when online (see GET /v1/sync/status)');
      }
      row = { block: this.claimRandomBlock(), next_offset: 0 };
    }
    this.advance.run(row.block);
    const slug = encode40(permute(row.block * BLOCK_SIZE + row.next_offset));
    // Unreachable unless two instances picked the same block; checked so it can never corrupt data.
    if (this.exists.get(slug)) return this.mint(orgId, nodeId);
    this.record.run(slug, orgId, nodeId, new Date(this.clock.now()).toISOString());
    return slug;
  }

  /** Slugs left in the blocks held now. */
  remaining(): number {
    const row = this.db
      .prepare(`SELECT COALESCE(SUM(${BLOCK_SIZE} - next_offset), 0) AS left FROM slug_blocks`)
      .get() as { left: number };
    return row.left;
  }

  private claimRandomBlock(): number {
    for (;;) {
      const block = randomInt(0, BLOCK_COUNT);
      if (this.blockExists.get(block) || this.blockTaken(block)) continue;
      this.claim.run(block, new Date(this.clock.now()).toISOString());
      return block;
    }
  }
}
