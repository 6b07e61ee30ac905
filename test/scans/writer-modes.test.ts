/**
 * The scan handler's durability paths on a real SQLite file, served over real HTTP:
 * synchronous=FULL with the commits flushed by a group fdatasync of the WAL off the event loop
 * (the default, db/walSync.ts) or by SQLite's fsync inside COMMIT, and synchronous=NORMAL (no
 * flush per commit). Concurrent scans are answered only once recorded, in one or a few group
 * commits, with scan_count and outbox events to match.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFixture, type Fixture } from './fixtures.ts';
import { createScanHandler, type ScanHandler } from '../../server/features/scans/handler.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';
import { PasswordAttempts } from '../../server/features/scans/passwordAttempts.ts';
import { subscribeToScans } from '../support/scanSubscriber.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

async function serve(f: Fixture, flush: 'off-thread' | 'in-commit'): Promise<{ url: string; handler: ScanHandler; recorded: number[] }> {
  const recorded: number[] = [];
  const handler = createScanHandler({ db: f.db, clock: systemClock, config: {}, passwordAttempts: new PasswordAttempts(new SqliteStore(f.db)), flush, onScansRecorded: (n) => recorded.push(n) });
  const server = http.createServer((req, res) => {
    if (!handler(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanup.push(() => f.close());
  cleanup.push(() => handler.close());
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handler, recorded };
}

describe.each([
  { synchronous: 'FULL', flush: 'off-thread' },
  { synchronous: 'FULL', flush: 'in-commit' },
  { synchronous: 'NORMAL', flush: 'off-thread' },
] as const)('synchronous=$synchronous, flush $flush', ({ synchronous, flush }) => {
  it('answers 200 concurrent scans, each recorded with its count and outbox event', async () => {
    const f = createFixture();
    f.db.pragma(`synchronous = ${synchronous}`);
    subscribeToScans(f.db, f.orgId);
    const ids = Array.from({ length: 20 }, (_, i) =>
      f.node({ slug: `W${String(i).padStart(7, '0')}`, function_type: 'redirect', payload: { url: `https://example.com/${i}` } }),
    );
    const { url, recorded } = await serve(f, flush);
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(`${url}/v/W${String(i % 20).padStart(7, '0')}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(200).fill(302));
    expect(f.db.prepare('SELECT count(*) FROM scan_events').pluck().get()).toBe(200);
    expect(f.db.prepare("SELECT count(*) FROM outbox_events WHERE type = 'node.scanned'").pluck().get()).toBe(200);
    for (const id of ids) expect(f.db.prepare('SELECT scan_count FROM nodes WHERE id = ?').pluck().get(id)).toBe(10);
    // outbox ids are time-ordered UUIDv7s in the outbox's format
    const eventIds = f.db.prepare("SELECT id FROM outbox_events WHERE type = 'node.scanned' ORDER BY seq").pluck().all() as string[];
    for (const id of eventIds) expect(id).toMatch(/^evt_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(new Set(eventIds).size).toBe(200);
    // the connection's own setting is left as it was (the FULL path relaxes it only per batch)
    expect(f.db.pragma('synchronous', { simple: true })).toBe(synchronous === 'FULL' ? 2 : 1);
    // listeners (webhook delivery) were told, in throttled batches
    await vi.waitFor(() => expect(recorded.reduce((a, b) => a + b, 0)).toBe(200), { timeout: 10_000, interval: 10 });
  });
});
