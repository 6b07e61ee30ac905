/**
 * The slugs feature's public face: minting (SlugAllocator, used by the nodes feature inside a
 * create's transaction) and the slug encoding other features read (sync leases blocks by number).
 */
export { BLOCK_COUNT, BLOCK_SIZE, type BlockTaken, OFFSET_BITS, SlugAllocator, type SlugSource } from './allocator.ts';
export { decode40, encode40, normalizeSlug } from './crockford.ts';
export { permute, unpermute } from './permutation.ts';
export { SlugsRepo } from './repo.ts';
