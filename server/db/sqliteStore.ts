/**
 * The SQLite backend of the storage seam: Kysely's better-sqlite3 dialect on the connection
 * openDatabase opened (migrations applied, change capture registered), with three additions:
 *
 * - one query or transaction at a time, as Kysely's own connection mutex does, but taken after a
 *   check that the caller is not inside a transaction: a root query from inside one would wait
 *   for the connection that transaction holds, forever (store.ts, TransactionScope);
 * - prepared statements are cached by SQL text: Kysely prepares every query afresh, which costs
 *   more than running most of them;
 * - a transaction must not outlive the event-loop turn it started in. The scan path writes on a
 *   connection of its own, synchronously (scans/sink.ts); a transaction held open across I/O
 *   would hold SQLite's write lock while that connection waits on busy_timeout, on this same
 *   thread. Everything a transaction awaits here resolves at once (better-sqlite3 is synchronous),
 *   so one that yielded to the event loop awaited real I/O inside a transaction: it is rolled
 *   back with an error instead.
 */
import { randomBytes } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { type DatabaseConnection, type DialectAdapter, type Driver, Kysely, SqliteAdapter, SqliteDialect, type TransactionSettings } from 'kysely';
import { captureState } from './capture.ts';
import type { Schema } from './schema.ts';
import { type Executor, runCommitted, type Store, type TransactionOptions, TransactionScope } from './store.ts';

const STATEMENT_CACHE_SIZE = 500;

/** A better-sqlite3 database whose `prepare` reuses statements by SQL text (LRU). */
function cachingDatabase(db: Database): Database {
  const cache = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    let stmt = cache.get(sql);
    if (stmt) {
      cache.delete(sql);
    } else {
      stmt = db.prepare(sql);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    }
    cache.set(sql, stmt);
    return stmt;
  };
  // Only prepare (and close, which Kysely calls on destroy: the store's owner closes the file).
  return { prepare, close: () => {} } as unknown as Database;
}

/** One holder at a time, in arrival order. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();

  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const acquired = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return acquired;
  }
}

class SerializedDriver implements Driver {
  private readonly inner: Driver;
  private readonly scope: TransactionScope;
  private readonly mutex = new Mutex();
  private readonly releases: Array<() => void> = [];

  private readonly inTransaction: () => boolean;

  constructor(inner: Driver, scope: TransactionScope, inTransaction: () => boolean) {
    this.inner = inner;
    this.scope = scope;
    this.inTransaction = inTransaction;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.scope.assertOutside();
    const release = await this.mutex.lock();
    this.releases.push(release);
    return this.inner.acquireConnection();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.inner.releaseConnection(connection);
    this.releases.shift()?.();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // SQLite ends the transaction itself on some errors (SQLITE_FULL among them): a ROLLBACK then
    // fails with "no transaction is active" and would hide the error that ended it (a full disk
    // answered 500 instead of 507).
    if (!this.inTransaction()) return Promise.resolve();
    return this.inner.rollbackTransaction(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly db: Executor;
  /** The better-sqlite3 connection underneath (the scan path opens its own beside it). */
  readonly connection: Database;
  private readonly scope = new TransactionScope();

  constructor(connection: Database) {
    this.connection = connection;
    const scope = this.scope;
    // Kysely's runtime takes its mutex before the driver could check the caller; this driver
    // takes its own after the check, so the adapter tells Kysely not to.
    class Adapter extends SqliteAdapter {
      override get supportsMultipleConnections(): boolean {
        return true;
      }
    }
    class Dialect extends SqliteDialect {
      override createDriver(): Driver {
        return new SerializedDriver(super.createDriver(), scope, () => connection.inTransaction);
      }
      override createAdapter(): DialectAdapter {
        return new Adapter();
      }
    }
    this.db = new Kysely<Schema>({ dialect: new Dialect({ database: cachingDatabase(connection) }) });
  }

  async transaction<T>(fn: (tx: Executor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const turn = { yielded: false };
    const timer = setImmediate(() => (turn.yielded = true));
    try {
      if (options.flush !== 'deferred') return await this.run(this.db, fn, turn);
      // The level is switched while this caller holds the connection (no other query can slip in
      // and commit at NORMAL) and switched back before it lets go.
      return await this.db.connection().execute((conn) => this.deferFlush(() => this.run(conn, fn, turn)));
    } finally {
      clearImmediate(timer);
    }
  }

  /**
   * Runs `commit` at synchronous = NORMAL (in WAL mode the commit is written to the WAL but not
   * fsynced; the next FULL commit or checkpoint flushes it), unless the connection's level is
   * already below FULL. `pragma` compiles afresh on every call: SQLite applies this pragma, and
   * reads its value, when the statement is prepared, so a cached statement would do neither.
   */
  private async deferFlush<T>(commit: () => Promise<T>): Promise<T> {
    const level = Number(this.connection.pragma('synchronous', { simple: true }));
    if (level < 2) return commit();
    this.connection.pragma('synchronous = NORMAL');
    try {
      return await commit();
    } finally {
      this.connection.pragma(`synchronous = ${level}`);
    }
  }

  private async run<T>(on: Executor, fn: (tx: Executor) => Promise<T>, turn: { yielded: boolean }): Promise<T> {
    const capture = captureState(this.connection);
    let committed: Array<() => void> = [];
    const result = await on.transaction().execute(async (tx) => {
      // The rows this transaction captures for sync travel as one group (db/capture.ts).
      capture.group = randomBytes(8).toString('hex');
      try {
        const out = await this.scope.run(tx, fn);
        if (turn.yielded) throw new Error('A SQLite transaction awaited I/O (it outlived its event-loop turn): do the I/O before or after it');
        committed = out.committed;
        return out.result;
      } finally {
        capture.group = null;
      }
    });
    runCommitted(committed);
    return result;
  }

  afterCommit(tx: Executor, fn: () => void): void {
    this.scope.afterCommit(this.db, tx, fn);
  }

  onTransactionStart(hook: (tx: Executor) => Promise<void> | void): void {
    this.scope.onStart(hook);
  }

  /** The caller that opened the connection closes it (openDatabase's owner). */
  async close(): Promise<void> {
    await this.db.destroy();
  }
}
