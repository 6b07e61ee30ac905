import {
  type ChangesPageT,
  FORKED_ERROR,
  type LeaseGrantedT,
  type LeaseInput,
  PUSH_GAP_ERROR,
  type PushInput,
  type PushResultT,
  type RegisterSiteInput,
  type SerialsGrantedT,
  type SerialsInput,
  type SiteRegisteredT,
  UNKNOWN_INCARNATION_ERROR,
} from '../../schemas/sync.ts';

/** The remote could not be reached or did not answer (network error, timeout, 5xx). */
export class RemoteUnavailableError extends Error {}

/** The remote answered with a refusal (4xx other than a fork). Retrying will not help by itself. */
export class RemoteRefusedError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The remote is missing changes before the pushed ones (it was restored): resend after expected. */
export class PushGapRemoteError extends Error {
  readonly expected: number;
  constructor(expected: number) {
    super(`Remote expects changes after seq ${expected}`);
    this.expected = expected;
  }
}

/** The remote says another copy of this site's data has moved the incarnation on, or has no record of it. */
export class ForkedError extends Error {}

export interface RemoteApi {
  register(body: RegisterSiteInput): Promise<SiteRegisteredT>;
  lease(body: LeaseInput): Promise<LeaseGrantedT>;
  push(body: PushInput): Promise<PushResultT>;
  changes(query: { cursor?: string | undefined; limit: number; site_id: string; incarnation: string }): Promise<ChangesPageT>;
  /** Reserves batch serials for a prefix at the remote (`POST /v1/sync/serials`). */
  serials?(body: SerialsInput): Promise<SerialsGrantedT>;
  /** Marks a conflict the remote logged (its id) resolved there too. */
  resolveConflict(id: number): Promise<unknown>;
  /** The remote's conflict log (`GET /v1/sync/conflicts`): which it has marked resolved. */
  conflicts(): Promise<Array<{ id: number; resolved_at: string | null }>>;
  /** Aborts calls in flight (shutdown must not wait for a slow remote). */
  close?(): void;
  /** Gives up on the calls in flight and any made after, until `resume` (they fail as unreachable with `reason`). */
  giveUp?(reason: string): void;
  /** Calls go ahead again (at the start of each round). */
  resume?(): void;
}

/** How long one call to the remote may take, and so how long `POST /v1/sync/run` waits at most without progress. */
export const REMOTE_CALL_TIMEOUT_MS = 15_000;

/** The error of a call the remote accepted but did not answer in time. */
export function noAnswerWithin(ms: number): string {
  return `Remote did not answer within ${Math.round(ms / 1000)} s`;
}

/** Talks to the remote's /v1/sync endpoints with the site's remote key. */
export class HttpRemoteClient implements RemoteApi {
  private readonly base: string;
  private readonly key: string;
  private readonly timeoutMs: number;
  private readonly closing = new AbortController();
  private givingUp = new AbortController();

  constructor(url: string, key: string, timeoutMs = REMOTE_CALL_TIMEOUT_MS) {
    this.base = url.replace(/\/+$/, '');
    this.key = key;
    this.timeoutMs = timeoutMs;
  }

  register(body: RegisterSiteInput): Promise<SiteRegisteredT> {
    return this.post('/v1/sync/sites', body) as Promise<SiteRegisteredT>;
  }

  lease(body: LeaseInput): Promise<LeaseGrantedT> {
    return this.post('/v1/sync/leases', body) as Promise<LeaseGrantedT>;
  }

  push(body: PushInput): Promise<PushResultT> {
    return this.post('/v1/sync/push', body) as Promise<PushResultT>;
  }

  changes(query: { cursor?: string | undefined; limit: number; site_id: string; incarnation: string }): Promise<ChangesPageT> {
    const q = new URLSearchParams({ limit: String(query.limit), site_id: query.site_id, incarnation: query.incarnation });
    if (query.cursor) q.set('cursor', query.cursor);
    return this.call('GET', `/v1/sync/changes?${q}`) as Promise<ChangesPageT>;
  }

  serials(body: SerialsInput): Promise<SerialsGrantedT> {
    return this.post('/v1/sync/serials', body) as Promise<SerialsGrantedT>;
  }

  resolveConflict(id: number): Promise<unknown> {
    return this.post(`/v1/sync/conflicts/${id}/resolve`, {});
  }

  conflicts(): Promise<Array<{ id: number; resolved_at: string | null }>> {
    return this.call('GET', '/v1/sync/conflicts') as Promise<Array<{ id: number; resolved_at: string | null }>>;
  }

  close(): void {
    this.closing.abort(new Error('shutting down'));
  }

  giveUp(reason: string): void {
    this.givingUp.abort(new Error(reason));
  }

  resume(): void {
    if (this.givingUp.signal.aborted) this.givingUp = new AbortController();
  }

  private post(path: string, body: unknown): Promise<unknown> {
    return this.call('POST', path, body);
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    let text: string;
    const signal = AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.closing.signal, this.givingUp.signal]);
    const send = () =>
      fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal,
      });
    try {
      try {
        res = await send();
      } catch (err) {
        // A kept-alive connection the remote closed as idle just as this call went out on it: the
        // call never reached the remote, so it goes again on a fresh connection (as browsers do).
        // Every sync call is safe to repeat anyway: the next round would.
        if (signal.aborted || !closedUnderUs(err)) throw err;
        res = await send();
      }
      text = await res.text();
    } catch (err) {
      // A remote that accepts the connection but never answers ends here too, by the timeout.
      if (err instanceof DOMException && err.name === 'TimeoutError') throw new RemoteUnavailableError(`Remote unreachable: ${noAnswerWithin(this.timeoutMs)}`);
      throw new RemoteUnavailableError(`Remote unreachable: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`);
    }
    let parsed: { data?: unknown; error?: string; details?: Record<string, string> } | undefined;
    try {
      parsed = JSON.parse(text) as { data?: unknown; error?: string; details?: Record<string, string> };
    } catch {
      parsed = undefined;
    }
    if (res.ok && parsed && parsed.data !== undefined) return parsed.data;
    const error = parsed?.error ?? `HTTP ${res.status}`;
    if (res.status === 409 && error === PUSH_GAP_ERROR) throw new PushGapRemoteError(Number(parsed?.details?.expected_seq ?? 0));
    if (res.status === 409 && (error === FORKED_ERROR || error === UNKNOWN_INCARNATION_ERROR)) throw new ForkedError(error);
    if (res.status >= 500 || res.status === 429 || !parsed) throw new RemoteUnavailableError(`Remote answered ${res.status}: ${error}`);
    throw new RemoteRefusedError(res.status, `Remote refused (${res.status}): ${error}`);
  }
}

/** The connection was closed or reset by the other side before any answer (undici's socket error, or the OS's). */
function closedUnderUs(err: unknown): boolean {
  const code = err instanceof Error && err.cause && typeof err.cause === 'object' ? (err.cause as { code?: unknown }).code : undefined;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}
