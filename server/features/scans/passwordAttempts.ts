/**
 * Password attempts on a gated node, per node and client address, so a password cannot be
 * guessed by brute force: at most MAX_ATTEMPTS in a fixed window of WINDOW_MS. An attempt counts
 * when it starts (before the slow hash), so attempts sent in parallel are bounded too; a right
 * password clears the address's count. Counted in the database (migration 079), so that every
 * process of a PostgreSQL central instance shares one count (docs/scans.md "Node limits").
 */
import { createHash } from 'node:crypto';
import type { Store } from '../../db/store.ts';
import { PasswordAttemptsRepo } from './passwordAttemptsRepo.ts';

export const MAX_ATTEMPTS = 5;
export const WINDOW_MS = 15 * 60_000;
/** Rows of windows that are over are deleted at most this often (per process). */
const CLEAN_EVERY_MS = 60_000;

export class PasswordAttempts {
  private readonly store: Store;
  private readonly repo = new PasswordAttemptsRepo();
  private readonly max: number;
  private readonly windowMs: number;
  private readonly onError: (err: unknown) => void;
  private cleanedAt = 0;

  constructor(store: Store, options: { max?: number; windowMs?: number; onError?: (err: unknown) => void } = {}) {
    this.store = store;
    this.max = options.max ?? MAX_ATTEMPTS;
    this.windowMs = options.windowMs ?? WINDOW_MS;
    this.onError = options.onError ?? (() => {});
  }

  /** Starts an attempt on `node` from `address` at `now` (clock ms): 0 if it may go on, else the seconds until it may. */
  async begin(node: string, address: string, now: number): Promise<number> {
    if (now - this.cleanedAt >= CLEAN_EVERY_MS) {
      this.cleanedAt = now;
      this.repo.deleteOlderThan(this.store.db, now - this.windowMs).catch(this.onError);
    }
    const w = await this.repo.count(this.store.db, keyOf(node, address), now, this.windowMs, this.max);
    if (w.attempts <= this.max) return 0;
    return Math.max(1, Math.ceil((w.from + this.windowMs - now) / 1000));
  }

  /** The right password: the address starts afresh. */
  async succeeded(node: string, address: string): Promise<void> {
    await this.repo.clear(this.store.db, keyOf(node, address));
  }
}

/** The row's key: a hash, so no client address is stored. */
function keyOf(node: string, address: string): string {
  return createHash('sha256').update(`${node}\u0000${address}`).digest('base64url');
}
