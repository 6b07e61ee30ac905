import type { Dialect, Executor } from '../../db/store.ts';
import { BLOCK_SIZE } from './allocator.ts';

/** Slugs per multi-row INSERT: 5 parameters each, far below SQLite's and PostgreSQL's limits. */
const INSERT_CHUNK = 500;

/**
 * The SQL of slug minting: the blocks this instance mints from, and every slug ever minted
 * (tombstones stay). Written so that any number of processes on one PostgreSQL database mint
 * each value once: an offset is taken by one atomic UPDATE on a row that stays locked until the
 * minting transaction ends, and a fresh block is claimed by an INSERT that only one can win.
 */
export class SlugsRepo {
  private readonly dialect: Dialect;

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  /**
   * Takes the next `count` offsets (from `offset` on) of the oldest block with room for them (only
   * leased blocks when `leasedOnly`). On PostgreSQL a block another transaction is minting from
   * is skipped when `skipLocked` (that process keeps it until it commits); without it the call
   * waits for that block.
   */
  async takeOffset(db: Executor, leasedOnly: boolean, skipLocked: boolean, count = 1): Promise<{ block: number; offset: number } | undefined> {
    const postgres = this.dialect === 'postgres';
    const row = await db
      .updateTable('slug_blocks')
      .set((eb) => ({ next_offset: eb('next_offset', '+', count) }))
      .where('block', '=', (eb) =>
        eb
          .selectFrom('slug_blocks')
          .select('block')
          .where('next_offset', '<=', BLOCK_SIZE - count)
          .$if(leasedOnly, (qb) => qb.where('source', '=', 'lease'))
          .orderBy('acquired_at')
          .orderBy('block')
          .limit(1)
          .$if(postgres, (qb) => qb.forUpdate())
          .$if(postgres && skipLocked, (qb) => qb.skipLocked()),
      )
      // Checked again on the locked row: a block filled meanwhile is not overrun.
      .where('next_offset', '<=', BLOCK_SIZE - count)
      .returning(['block', 'next_offset'])
      .executeTakeFirst();
    return row && { block: row.block, offset: row.next_offset - count };
  }

  /** Claims a fresh block with its first offset taken; false when the block already exists. */
  async claimBlock(db: Executor, block: number, at: string): Promise<boolean> {
    const row = await db
      .insertInto('slug_blocks')
      .values({ block, next_offset: 1, source: 'local', acquired_at: at })
      .onConflict((oc) => oc.column('block').doNothing())
      .returning('block')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Records a minted slug; false when the slug exists already (it is then not recorded). */
  async record(db: Executor, row: { slug: string; org_id: string; node_id: string; minted_at: string }): Promise<boolean> {
    const inserted = await db
      .insertInto('slugs')
      .values({ ...row, deleted_at: null })
      .onConflict((oc) => oc.column('slug').doNothing())
      .returning('slug')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /** Records minted slugs, a few hundred per INSERT; returns those recorded (a slug that exists already is not). */
  async recordMany(db: Executor, rows: ReadonlyArray<{ slug: string; org_id: string; node_id: string; minted_at: string }>): Promise<Set<string>> {
    const recorded = new Set<string>();
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const inserted = await db
        .insertInto('slugs')
        .values(rows.slice(i, i + INSERT_CHUNK).map((row) => ({ ...row, deleted_at: null })))
        .onConflict((oc) => oc.column('slug').doNothing())
        .returning('slug')
        .execute();
      for (const { slug } of inserted) recorded.add(slug);
    }
    return recorded;
  }

  /** Slugs left in the blocks held now. */
  async remaining(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('slug_blocks')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>(eb(eb.val(BLOCK_SIZE), '-', eb.ref('next_offset'))), eb.lit(0)).as('left'))
      .executeTakeFirstOrThrow();
    return Number(row.left);
  }
}
