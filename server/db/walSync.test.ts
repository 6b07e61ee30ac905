import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from './database.ts';
import { WalSync, type Fdatasync } from './walSync.ts';

let dirs: string[] = [];
let dbs: Database[] = [];
afterEach(() => {
  for (const db of dbs) db.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
  dbs = [];
});

function database(): Database {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-walsync-'));
  dirs.push(dir);
  const db = openDatabase(join(dir, 'waymark.db'));
  dbs.push(db);
  db.exec('CREATE TABLE t (v INTEGER)');
  return db;
}

/** An fdatasync whose calls complete only when the test says so. */
function heldFlushes(): { fdatasync: Fdatasync; calls: number[]; complete(err?: Error): void } {
  const pending: Array<(err: NodeJS.ErrnoException | null) => void> = [];
  const calls: number[] = [];
  return {
    calls,
    fdatasync: (fd, done) => {
      calls.push(fd);
      pending.push(done);
    },
    complete: (err) => pending.shift()?.(err ?? null),
  };
}

describe('WalSync', () => {
  it('reports a commit durable after a real fdatasync of the WAL file', async () => {
    const db = database();
    db.pragma('synchronous = NORMAL');
    db.prepare('INSERT INTO t VALUES (1)').run();
    const wal = new WalSync(db.name);
    await expect(new Promise<Error | null>((resolve) => wal.afterCommit(resolve))).resolves.toBeNull();
    await wal.close();
  });

  it('never reports a commit on a flush that started before it: later commits share the next flush', async () => {
    const db = database();
    const held = heldFlushes();
    const wal = new WalSync(db.name, { fdatasync: held.fdatasync });
    const done: string[] = [];
    wal.afterCommit(() => done.push('a'));
    expect(held.calls).toHaveLength(1); // a's flush runs
    wal.afterCommit(() => done.push('b'));
    wal.afterCommit(() => done.push('c'));
    expect(held.calls).toHaveLength(1); // b and c wait: their frames may postdate a's flush
    held.complete();
    expect(done).toEqual(['a']);
    expect(held.calls).toHaveLength(2); // one flush for both
    held.complete();
    expect(done).toEqual(['a', 'b', 'c']);
    expect(wal.busy).toBe(false);
    await wal.close();
  });

  it('passes a failed flush on to every commit waiting for it, and flushes again for the next', async () => {
    const db = database();
    const held = heldFlushes();
    const wal = new WalSync(db.name, { fdatasync: held.fdatasync });
    const results: Array<Error | null> = [];
    wal.afterCommit((err) => results.push(err));
    held.complete(new Error('EIO'));
    expect(results[0]?.message).toBe('EIO');
    wal.afterCommit((err) => results.push(err));
    held.complete();
    expect(results[1]).toBeNull();
    await wal.close();
  });

  it('fails, without flushing, when there is no WAL file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-walsync-'));
    dirs.push(dir);
    const wal = new WalSync(join(dir, 'missing.db'));
    const err = await new Promise<Error | null>((resolve) => wal.afterCommit(resolve));
    expect(err?.message).toMatch(/ENOENT/);
    await wal.close();
  });

  it('close waits for the flushes under way; afterwards commits are refused', async () => {
    const db = database();
    const held = heldFlushes();
    const wal = new WalSync(db.name, { fdatasync: held.fdatasync });
    let reported = false;
    wal.afterCommit(() => (reported = true));
    const closed = wal.close();
    await vi.waitFor(() => expect(held.calls).toHaveLength(1)); // the flush is under way …
    expect(reported).toBe(false); // … and held: nothing may be reported before it completes
    held.complete();
    await closed;
    expect(reported).toBe(true);
    const err = await new Promise<Error | null>((resolve) => wal.afterCommit(resolve));
    expect(err?.message).toBe('WAL sync is closed');
  });
});
