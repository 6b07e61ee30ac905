/**
 * The scan path of a central instance: several real processes on one PostgreSQL database
 * (test/support/postgresScanProcess.ts: the scan handler on the PostgreSQL storage and the
 * background fold, as createApp wires them, with a /change hook that answers once a change has
 * committed). test/processes runs the kill under load on whole `serve --database` processes too.
 *
 * - A change committed and answered by one process is what the other serves, at the latest once
 *   the cache bound (SCAN_CACHE_STALE_MS, 1 s) has passed: every scan sent after that gets the new
 *   destination (polled until the deadline, then asserted; no fixed sleep).
 * - Under a scan load spread over two processes, one is SIGKILLed: every scan answered 302 by
 *   either has its event, scan_count and node.scanned event, and the fold counts each scan once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { PostgresStore } from '../../server/db/postgresStore.ts';
import type { Store } from '../../server/db/store.ts';
import { ScanAnalytics } from '../../server/features/scans/analytics.ts';
import { SCAN_CACHE_STALE_MS } from '../../server/features/scans/postgresStorage.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { repoRoot } from '../support/server.ts';
import { freshPostgresDatabase, postgresMissing } from '../support/stores.ts';
import { seedNode, seedOrg, subscribeToScansOn } from '../support/scanSeed.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

interface ScanProcess {
  url: string;
  child: ChildProcess;
  kill(): Promise<void>;
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function spawnScanProcess(databaseUrl: string): Promise<ScanProcess> {
  const child = spawn(process.execPath, [join(repoRoot, 'test', 'support', 'postgresScanProcess.ts'), databaseUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`scan process exited with ${code}:\n${out}`)));
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  cleanup.push(kill);
  return { url: `http://127.0.0.1:${port}`, child, kill };
}

async function database(): Promise<{ url: string; store: Store }> {
  const db = await freshPostgresDatabase();
  const store = await PostgresStore.open(db.url, { poolSize: 4 });
  cleanup.push(async () => {
    await store.close();
    await db.drop();
  });
  return { url: db.url, store };
}

async function scan(base: string, slug: string): Promise<Response> {
  return fetch(`${base}/v/${slug}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } });
}

describe.skipIf(postgresMissing !== null)(`scans on several processes${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`, () => {
  it('a change answered by one process is served by another at the latest once the cache bound has passed', { timeout: 120_000 }, async () => {
    const { url, store } = await database();
    const org = await seedOrg(store);
    await seedNode(store, org, { slug: 'AAAAAAAA', payload: { url: 'https://example.com/old' } });
    const [a, b] = await Promise.all([spawnScanProcess(url), spawnScanProcess(url)]);
    // B has the node cached.
    expect((await scan(b.url, 'AAAAAAAA')).headers.get('location')).toBe('https://example.com/old');

    const change = await fetch(`${a.url}/change?slug=AAAAAAAA&url=${encodeURIComponent('https://example.com/new')}`, { method: 'POST' });
    expect(change.status).toBe(204);
    const answeredAt = performance.now();
    const deadline = answeredAt + SCAN_CACHE_STALE_MS;
    const late: string[] = [];
    let sawNewAt: number | null = null;
    // Scan B until two scans sent after the deadline have come back; every one of them must be new.
    while (late.length < 2) {
      const sentAt = performance.now();
      const location = (await scan(b.url, 'AAAAAAAA')).headers.get('location') ?? '';
      if (location === 'https://example.com/new') sawNewAt ??= sentAt - answeredAt;
      if (sentAt > deadline) late.push(location);
    }
    expect(late).toEqual(['https://example.com/new', 'https://example.com/new']);
    expect(sawNewAt).not.toBeNull();
    // (typically within milliseconds: the triggers NOTIFY every process)
    const served = await store.db.selectFrom('scan_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(served.n)).toBeGreaterThanOrEqual(3);
  });

  it('every scan answered before one of two processes is SIGKILLed under load is recorded and counted exactly once', { timeout: 180_000 }, async () => {
    const NODES = 900;
    const KILL_AFTER = 200;
    const { url, store } = await database();
    const org = await seedOrg(store);
    await subscribeToScansOn(store, org);
    const ids = new Map<string, string>();
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    for (let i = 0; i < NODES; i++) {
      let v = 0x2345678 + i;
      let slug = '';
      for (let k = 0; k < 8; k++) {
        slug = alphabet[v % 32] + slug;
        v = Math.floor(v / 32);
      }
      ids.set(slug, await seedNode(store, org, { slug }));
    }
    const processes = await Promise.all([spawnScanProcess(url), spawnScanProcess(url)]);
    const victim = processes[0] as ScanProcess;
    const slugs = [...ids.keys()];
    const answered: string[] = [];
    let next = 0;
    const kill: { done: Promise<void> | null } = { done: null };
    let answeredAfterKill = 0;
    async function worker(w: number): Promise<void> {
      while (next < slugs.length) {
        const slug = slugs[next++] as string;
        // Round robin, as a load balancer would: each slug is scanned once, by one process.
        const target = processes[(w + next) % 2] as ScanProcess;
        try {
          const res = await scan(target.url, slug);
          if (res.status === 302) {
            answered.push(slug);
            if (kill.done) answeredAfterKill++;
          }
        } catch {
          // the connection died with its process: not answered
        }
        if (answered.length >= KILL_AFTER && !kill.done) kill.done = victim.kill();
      }
    }
    await Promise.all(Array.from({ length: 32 }, (_, w) => worker(w)));
    expect(kill.done).not.toBeNull();
    await kill.done;
    expect(answeredAfterKill).toBeGreaterThan(0); // the survivor went on serving

    const rows = await store.db.selectFrom('scan_events').select(['node_id']).execute();
    const perNode = new Map<string, number>();
    for (const r of rows) perNode.set(r.node_id, (perNode.get(r.node_id) ?? 0) + 1);
    expect([...perNode.values()].filter((n) => n !== 1)).toEqual([]); // none twice
    expect(answered.filter((slug) => perNode.get(ids.get(slug) as string) !== 1)).toEqual([]);
    const counts = new Map((await store.db.selectFrom('nodes').select(['id', 'scan_count']).execute()).map((n) => [n.id, Number(n.scan_count)]));
    for (const slug of answered) expect(counts.get(ids.get(slug) as string)).toBe(1);
    const events = (await store.db.selectFrom('outbox_events').select('data_json').where('type', '=', 'node.scanned').execute()).map(
      (e) => (JSON.parse(e.data_json) as { node: { slug: string } }).node.slug,
    );
    expect(new Set(events).size).toBe(events.length);
    for (const slug of answered) expect(events).toContain(slug);

    // The survivor's background fold and this query's fold, together: every scan once.
    const analytics = new ScanAnalytics(store, systemClock);
    await analytics.caughtUp();
    const figures = await analytics.forOrg(org, { from: '2026-01-01', to: new Date(Date.now() + 86_400_000).toISOString() });
    expect(figures.totals.scans).toBe(rows.length);
    expect(figures.totals.nodes_scanned).toBe(rows.length);
    const folded = await store.db.selectFrom('scan_events_by_node').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(folded.n)).toBe(rows.length);
  });
});
