/**
 * The scan path on PostgreSQL (storage.ts), for a central instance of many processes: resolution
 * from a per-process cache kept within a bounded staleness (sharedCache.ts: LISTEN for speed, an
 * epoch read for the bound), and per-process group commits (postgresWriter.ts), each scan answered
 * only after its batch's COMMIT.
 */
import { randomBytes } from 'node:crypto';
import { listenPostgres, type Listening } from '../../db/postgresListen.ts';
import type { PostgresStore } from '../../db/postgresStore.ts';
import { PostgresScanRepo } from './postgresRepo.ts';
import type { SubscriptionCheck } from '../../platform/outbox.ts';
import { PostgresScanWriter } from './postgresWriter.ts';
import { SchemaAnswers, buildEntry, type CacheEntry } from './resolver.ts';
import { SharedScanCache } from './sharedCache.ts';
import type { ScanKey, ScanStorage, ScanView } from './storage.ts';
import { utcDay } from './visitor.ts';

/** Default bound: a change is served by every process at most this long after its commit. */
export const SCAN_CACHE_STALE_MS = 1000;
/** NOTIFY channel of the scan-cache triggers (postgres/064_scans_many_processes.sql). */
const CHANNEL = 'waymark_scan_cache';
/** Tries to resolve a batch within the bound before answering it 503 (the database is that slow). */
const ATTEMPTS = 3;

export interface PostgresScanStorageOptions {
  store: PostgresStore;
  /** The staleness bound (docs/scans.md "On PostgreSQL"); default SCAN_CACHE_STALE_MS. */
  staleMs?: number;
  /** Batches between being resolved and committed, at most (default 1, as on SQLite). */
  maxInFlight?: number;
  /** Whether an organization has an endpoint subscribed to an event (webhooks/index.ts subscriptionCheck). */
  subscribed: SubscriptionCheck;
  onError: (err: unknown) => void;
}

export function postgresScanStorage(options: PostgresScanStorageOptions): ScanStorage {
  const { store, onError } = options;
  const repo = new PostgresScanRepo();
  const writer = new PostgresScanWriter(store, repo, options.subscribed);
  const staleMs = options.staleMs ?? SCAN_CACHE_STALE_MS;
  const cache = new SharedScanCache(() => repo.cacheEpoch(store.db), staleMs);
  const salts = new Map<string, string>();
  // The schemas' verdicts on stored payloads and conditions, kept across cache reloads.
  const answers = new SchemaAnswers();

  const confirmSoon = () => {
    cache.confirm().catch(onError);
  };
  const listening: Listening = listenPostgres(store, CHANNEL, {
    notify: (payload) => {
      const epoch = Number(payload);
      if (Number.isSafeInteger(epoch)) cache.moved(epoch);
      else confirmSoon();
    },
    gap: confirmSoon,
    error: onError,
  });
  // Keeps the cache confirmed, so a batch rarely waits for the read itself.
  const poll = setInterval(confirmSoon, Math.max(10, Math.floor(staleMs / 4)));
  poll.unref();

  function saltOf(at: number): string {
    const salt = salts.get(utcDay(at));
    if (salt === undefined) throw new Error('no salt loaded for this day');
    return salt;
  }

  async function loadSalts(scans: ReadonlyArray<ScanKey>): Promise<void> {
    for (const day of new Set(scans.map((s) => utcDay(s.at)))) {
      if (salts.has(day)) continue;
      if (salts.size > 4) salts.clear();
      salts.set(day, await repo.saltFor(store.db, day, randomBytes(32).toString('base64url')));
    }
  }

  async function loadEntries(slugs: readonly string[]): Promise<Map<string, CacheEntry>> {
    const [nodes, minted] = await Promise.all([repo.nodesBySlug(store.db, slugs), repo.mintedSlugs(store.db, slugs)]);
    const rules = nodes.length > 0 ? await repo.rulesOf(store.db, nodes.map((n) => n.id)) : [];
    const out = new Map<string, CacheEntry>();
    for (const node of nodes) out.set(node.slug, buildEntry(node, rules.filter((r) => r.node_id === node.id), answers));
    for (const slug of slugs) {
      if (!out.has(slug)) out.set(slug, minted.get(slug) ? { kind: 'deleted' } : { kind: 'unknown' });
    }
    return out;
  }

  /** The view from the cache alone, or null when something must be read first. */
  function viewNow(scans: ReadonlyArray<ScanKey>): ScanView | null {
    if (!cache.fresh()) return null;
    const entries = new Map<string, CacheEntry>();
    for (const s of scans) {
      const e = cache.get(s.slug);
      if (!e || !salts.has(utcDay(s.at))) return null;
      entries.set(s.slug, e);
    }
    return { entry: (slug) => entries.get(slug) as CacheEntry, salt: saltOf };
  }

  async function viewLater(scans: ReadonlyArray<ScanKey>): Promise<ScanView> {
    for (let attempt = 1; ; attempt++) {
      if (!cache.fresh()) await cache.confirm();
      const gen = cache.generation;
      const entries = new Map<string, CacheEntry>();
      const missing = new Set<string>();
      for (const s of scans) {
        const e = cache.get(s.slug);
        if (e) entries.set(s.slug, e);
        else missing.add(s.slug);
      }
      if (missing.size > 0) {
        for (const [slug, e] of await loadEntries([...missing])) {
          entries.set(slug, e);
          cache.put(gen, slug, e);
        }
      }
      await loadSalts(scans);
      // Still within the bound, and no change notified while reading: serve these.
      if (cache.fresh() && cache.generation === gen) return { entry: (slug) => entries.get(slug) as CacheEntry, salt: saltOf };
      if (attempt >= ATTEMPTS) throw new Error(`scan cache: could not read a state confirmed within ${staleMs} ms`);
    }
  }

  return {
    view: (scans) => viewNow(scans) ?? viewLater(scans),
    write(records, done, recount) {
      writer.write(records, recount).then(
        (results) => done(null, results),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    },
    scanCount: (nodeId) => repo.scanCountOf(store.db, nodeId),
    maxInFlight: options.maxInFlight ?? 1,
    async close() {
      clearInterval(poll);
      await listening.close();
    },
  };
}
