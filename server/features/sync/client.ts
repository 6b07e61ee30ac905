import { FORKED_ERROR, UNKNOWN_INCARNATION_ERROR, type LeaseGrantedT, type LeaseInput, type RegisterSiteInput, type SiteRegisteredT } from '../../schemas/sync.ts';

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

/** The remote says another copy of this site's data has moved the incarnation on, or has no record of it. */
export class ForkedError extends Error {}

export interface RemoteApi {
  register(body: RegisterSiteInput): Promise<SiteRegisteredT>;
  lease(body: LeaseInput): Promise<LeaseGrantedT>;
  /** Aborts calls in flight (shutdown must not wait for a slow remote). */
  close?(): void;
}

/** Talks to the remote's /v1/sync endpoints with the site's remote key. */
export class HttpRemoteClient implements RemoteApi {
  private readonly base: string;
  private readonly key: string;
  private readonly timeoutMs: number;
  private readonly closing = new AbortController();

  constructor(url: string, key: string, timeoutMs = 15_000) {
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

  close(): void {
    this.closing.abort(new Error('shutting down'));
  }

  private post(path: string, body: unknown): Promise<unknown> {
    return this.call('POST', path, body);
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.closing.signal]),
      });
      text = await res.text();
    } catch (err) {
      throw new RemoteUnavailableError(`Remote unreachable: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`);
    }
    let parsed: { data?: unknown; error?: string } | undefined;
    try {
      parsed = JSON.parse(text) as { data?: unknown; error?: string };
    } catch {
      parsed = undefined;
    }
    if (res.ok && parsed && parsed.data !== undefined) return parsed.data;
    const error = parsed?.error ?? `HTTP ${res.status}`;
    if (res.status === 409 && (error === FORKED_ERROR || error === UNKNOWN_INCARNATION_ERROR)) throw new ForkedError(error);
    if (res.status >= 500 || res.status === 429 || !parsed) throw new RemoteUnavailableError(`Remote answered ${res.status}: ${error}`);
    throw new RemoteRefusedError(res.status, `Remote refused (${res.status}): ${error}`);
  }
}
