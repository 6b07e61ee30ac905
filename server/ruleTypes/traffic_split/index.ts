import { defineRuleType, type Matcher, type ScanContext } from '../define.ts';
import { SplitConditions } from './schema.ts';

/**
 * A visitor's bucket 0..99 on a node: stable for the visitor key's lifetime (one day), and
 * independent across nodes. The visitor key is already a salted SHA-256, so mixing it with the
 * node id needs no second cryptographic hash (one per scan was ~4 % of the scan path's CPU):
 * FNV-1a over both strings, then MurmurHash3's finalizer so every input bit reaches the low bits.
 */
export function splitBucket(visitor: string, nodeId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < nodeId.length; i++) h = Math.imul(h ^ nodeId.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ 0, 0x01000193);
  for (let i = 0; i < visitor.length; i++) h = Math.imul(h ^ visitor.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % 100;
}

/**
 * Each split rule owns `weight` of the 100 buckets, in rule order (20 and 30 → 0–19 and 20–49;
 * the rest falls through). The node's split rules share one bucket per scan.
 */
function compileSplits(all: readonly { weight: number }[]): Matcher[] {
  let lastCtx: ScanContext | null = null;
  let lastBucket = 0;
  const bucketOf = (ctx: ScanContext): number => {
    if (ctx !== lastCtx) {
      lastCtx = ctx;
      lastBucket = splitBucket(ctx.visitor, ctx.node_id);
    }
    return lastBucket;
  };
  let cursor = 0;
  return all.map((c) => {
    const from = cursor;
    cursor = Math.min(100, cursor + Math.max(0, Math.floor(c.weight)));
    const to = cursor;
    return (ctx: ScanContext) => {
      const bucket = bucketOf(ctx);
      return bucket >= from && bucket < to;
    };
  });
}

export const trafficSplit = defineRuleType({
  conditions: SplitConditions,
  compile: compileSplits,
  checkSiblings(c, siblings) {
    const others = siblings.reduce((sum, s) => sum + s.weight, 0);
    if (others + c.weight <= 100) return null;
    return { 'conditions.weight': `split weights of a node must sum to at most 100 (${100 - others} left)` };
  },
  variant: { share: (c) => c.weight },
});
