/**
 * The storage seam: every repository runs its queries on an `Executor` (Kysely over one schema,
 * server/db/schema.ts), and every write operation runs in `store.transaction`, which hands the
 * transaction to the repositories it calls (the fastify demo's model: async, transaction passed
 * in). Two backends implement it: SQLite (sqliteStore.ts, the embedded default) and PostgreSQL
 * (postgresStore.ts, the central tier). docs/decisions.md, "Storage seam", says why Kysely.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely } from 'kysely';
import type { Schema } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

/** What a repository runs its queries on: the store's root connection or an open transaction. */
export type Executor = Kysely<Schema>;

/** How a transaction's commit reaches the disk. */
export interface TransactionOptions {
  /**
   * `deferred`: the commit does not wait for the disk (SQLite: `synchronous = NORMAL` for this
   * commit; PostgreSQL: `synchronous_commit = off` for this transaction). A
   * crash of the process loses nothing; a power cut (or a crash of the PostgreSQL server) may lose
   * the last such commits. Only for bookkeeping that is safe to redo (webhook delivery state).
   */
  flush?: 'deferred';
}

export interface Store {
  readonly dialect: Dialect;
  /** Reads outside a transaction, and single-statement writes that need none. */
  readonly db: Executor;
  /**
   * Runs `fn` in one transaction, committed when it resolves and rolled back when it throws.
   * Inside `fn`, query only through `tx` (and pass it on): a query on `db` there throws, since on
   * SQLite it would wait for the very connection the transaction holds.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs `fn` after the transaction `tx` commits (right away, in a microtask, when `tx` is `db`). */
  afterCommit(tx: Executor, fn: () => void): void;
  /** Called at the start of every transaction, before `fn` (change capture sets its context). */
  onTransactionStart(hook: (tx: Executor) => Promise<void> | void): void;
  close(): Promise<void>;
}

/**
 * Bookkeeping both backends share: which async context is inside a transaction (so a stray query
 * on the root connection fails loudly), the after-commit callbacks and the start hooks.
 */
export class TransactionScope {
  private readonly inside = new AsyncLocalStorage<Executor>();
  private readonly pending = new WeakMap<Executor, Array<() => void>>();
  private readonly startHooks: Array<(tx: Executor) => Promise<void> | void> = [];

  /** Throws when called from inside a transaction's callback (see Store.transaction). */
  assertOutside(): void {
    if (this.inside.getStore()) {
      throw new Error('Query on the root connection inside a transaction: run it on the transaction passed to the callback');
    }
  }

  onStart(hook: (tx: Executor) => Promise<void> | void): void {
    this.startHooks.push(hook);
  }

  /** Runs fn for an open transaction tx, then returns its after-commit callbacks. */
  async run<T>(tx: Executor, fn: (tx: Executor) => Promise<T>): Promise<{ result: T; committed: Array<() => void> }> {
    const callbacks: Array<() => void> = [];
    this.pending.set(tx, callbacks);
    return this.inside.run(tx, async () => {
      for (const hook of this.startHooks) await hook(tx);
      const result = await fn(tx);
      return { result, committed: callbacks };
    });
  }

  afterCommit(root: Executor, tx: Executor, fn: () => void): void {
    const callbacks = tx === root ? undefined : this.pending.get(tx);
    if (callbacks) callbacks.push(fn);
    else queueMicrotask(fn);
  }
}

/** Runs after-commit callbacks; one that throws does not keep the others from running. */
export function runCommitted(callbacks: Array<() => void>, onError: (err: unknown) => void = (err) => console.error(err)): void {
  for (const cb of callbacks) {
    try {
      cb();
    } catch (err) {
      onError(err);
    }
  }
}

/** True for a `--database` value that names a PostgreSQL server. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}
