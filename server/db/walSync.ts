/**
 * Group fsync of a WAL-mode database's write-ahead log, off the event loop.
 *
 * With `synchronous = FULL` SQLite fsyncs the WAL inside every COMMIT: the calling thread blocks
 * for the flush, and every transaction pays for one. A writer that only needs to know *when*
 * its transaction is durable can instead commit with `synchronous = NORMAL` (the frames are
 * written to the WAL, not flushed) and then call `afterCommit`: the callback runs once an
 * fdatasync of the WAL file that started after that commit has returned, which makes the
 * transaction exactly as durable as a FULL commit (a FULL commit is that same flush, done
 * inline). Transactions committed while a flush is running share the next one.
 *
 * The flush runs on libuv's thread pool (fs.fdatasync), so the event loop keeps parsing and
 * committing meanwhile. The WAL file is never locked by SQLite (its locks live in the -shm
 * file), so holding our own descriptor to it is safe.
 */
import { closeSync, fdatasync, fstatSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export type Durable = (err: Error | null) => void;

/** The flush itself (fs.fdatasync; replaceable in tests to hold a flush open). */
export type Fdatasync = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

export class WalSync {
  private readonly walPath: string;
  private fd: number | null = null;
  /** Committed, waiting for a flush that starts after their commit. */
  private waiting: Durable[] = [];
  private flushing = false;
  private closed = false;
  private readonly fdatasync: Fdatasync;

  /** `databaseFile`: the main database file (the WAL is `<file>-wal`). */
  constructor(databaseFile: string, options: { fdatasync?: Fdatasync } = {}) {
    this.walPath = `${databaseFile}-wal`;
    this.fdatasync = options.fdatasync ?? fdatasync;
  }

  /** Call right after a transaction committed: `done` runs when it is on disk (or the flush failed). */
  afterCommit(done: Durable): void {
    if (this.closed) {
      done(new Error('WAL sync is closed'));
      return;
    }
    this.waiting.push(done);
    if (!this.flushing) this.flush();
  }

  /** Whether a flush is running or waiting to run. */
  get busy(): boolean {
    return this.flushing || this.waiting.length > 0;
  }

  /** Waits for the pending flushes, then releases the descriptor. */
  async close(): Promise<void> {
    while (this.busy) await new Promise((r) => setTimeout(r, 2));
    this.closed = true;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private flush(): void {
    const group = this.waiting;
    this.waiting = [];
    this.flushing = true;
    let fd: number;
    try {
      fd = this.descriptor();
    } catch (err) {
      this.finish(group, err);
      return;
    }
    this.fdatasync(fd, (err) => this.finish(group, err));
  }

  private finish(group: Durable[], err: unknown): void {
    this.flushing = false;
    const error = err ? (err instanceof Error ? err : new Error(String(err))) : null;
    for (const done of group) done(error);
    if (this.waiting.length > 0 && !this.closed) this.flush();
  }

  /** The WAL's descriptor; reopened if the file was replaced (deleted and created again). */
  private descriptor(): number {
    if (this.fd !== null && fstatSync(this.fd).nlink > 0) return this.fd;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    const fd = openSync(this.walPath, 'r');
    // A WAL file created since the directory was last flushed is durable only once its entry is
    // (SQLite does the same on its first WAL sync). Once per descriptor, so rarely.
    const dir = openSync(dirname(this.walPath), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.fd = fd;
    return fd;
  }
}
