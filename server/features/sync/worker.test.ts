import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { SqliteStore } from '../../db/sqliteStore.ts';
import { ManualClock } from '../../platform/clock.ts';
import { type RemoteApi, RemoteUnavailableError } from './client.ts';
import { SyncRepo } from './repo.ts';
import { SiteSync } from './site.ts';
import { SyncWorker } from './worker.ts';

const quiet = { info: () => {}, error: () => {} };

describe('SyncWorker', () => {
  it('backs off exponentially (with jitter, capped) while the remote is unreachable, and runNow ignores the back-off', async () => {
    let calls = 0;
    const down: RemoteApi = {
      push: () => Promise.reject(new Error('not used here')),
      changes: () => Promise.reject(new Error('not used here')),
      resolveConflict: () => Promise.reject(new Error('not used here')),
      conflicts: () => Promise.reject(new Error('not used here')),
      register: async () => {
        calls += 1;
        throw new RemoteUnavailableError('Remote unreachable: connect ECONNREFUSED');
      },
      lease: async () => {
        throw new RemoteUnavailableError('unreachable');
      },
    };
    const clock = new ManualClock();
    const site = await SiteSync.open({ store: new SqliteStore(openDatabase(':memory:')), repo: new SyncRepo('sqlite'), clock, logger: quiet, remoteUrl: 'http://r.test', client: down, reserveBlocks: 2, siteName: 's' });
    const delays: number[] = [];
    const note = site.noteNextAttempt.bind(site);
    site.noteNextAttempt = (at: number | null) => {
      if (at !== null) delays.push(at - clock.now());
      note(at);
    };
    const worker = new SyncWorker(site, clock, quiet, { pollMs: 60_000, minBackoffMs: 4, maxBackoffMs: 64 });
    worker.start();
    while (delays.length < 8) await new Promise((r) => setTimeout(r, 5));
    await worker.stop();

    const bases = [4, 8, 16, 32, 64, 64, 64, 64];
    delays.slice(0, 8).forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(bases[i]! / 2);
      expect(d).toBeLessThanOrEqual(bases[i]!);
    });
    expect(await site.status()).toMatchObject({ online: false, paired: false, last_error: 'Remote unreachable: connect ECONNREFUSED' });

    // A long back-off does not delay "sync now".
    const slow = new SyncWorker(site, clock, quiet, { pollMs: 60_000, minBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 });
    const atStart = calls;
    slow.start();
    while (calls === atStart) await new Promise((r) => setTimeout(r, 5)); // its first round failed
    const before = calls;
    await slow.runNow();
    expect(calls).toBe(before + 1);
    await slow.stop();
  });

  it('a run waits for a round that keeps making progress past the bound, and gives up on one that makes none', async () => {
    // A stand-in for the site: what SyncWorker uses of it, with rounds the test paces.
    const listeners = new Set<() => void>();
    let gaveUp: string | null = null;
    let round: () => Promise<void> = async () => {};
    const site = {
      canSync: () => true,
      needsWork: async () => false,
      noteNextAttempt: () => {},
      step: () => round(),
      giveUp: (reason: string) => {
        gaveUp = reason;
        for (const l of [...stalled]) l();
      },
      onProgress: (l: () => void) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
    const stalled = new Set<() => void>();
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const worker = new SyncWorker(site as unknown as SiteSync, new ManualClock(), quiet, { pollMs: 3_600_000, minBackoffMs: 3_600_000, maxBackoffMs: 3_600_000, runBoundMs: 1_000 });
    worker.start();
    await pause(10); // the first round (empty) is done; the worker sleeps

    // Six pages, each well inside the bound, together far past it: never given up. (Timers fire in
    // order of when they are due, so a stalled machine delays both alike.)
    let pages = 0;
    round = async () => {
      for (let i = 0; i < 6; i++) {
        await pause(300);
        pages += 1;
        for (const l of listeners) l();
      }
    };
    await worker.runNow();
    expect(pages).toBe(6);
    expect(gaveUp).toBeNull();

    // A round whose call never answers: given up once the bound passes without progress.
    round = () => new Promise<void>((_resolve, reject) => stalled.add(() => reject(new Error('given up'))));
    await worker.runNow();
    expect(gaveUp).toBe('Remote did not answer within 1 s');
    await worker.stop();
  });
});
