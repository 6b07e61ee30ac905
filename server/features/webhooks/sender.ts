import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { BlockList } from 'node:net';
import { isPrivateAddress } from './address.ts';

export interface OutgoingMessage {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendResult {
  /** HTTP status, or null when no response arrived (refused, timeout, DNS …). */
  statusCode: number | null;
  /** Why the attempt failed (null on a 2xx). */
  error: string | null;
  durationMs: number;
  /** Stopped by the worker shutting down: not a real attempt, not recorded. */
  aborted: boolean;
}

export interface SenderOptions {
  timeoutMs: number;
  /** Refuse to connect to private/loopback addresses (checked on the resolved address). */
  publicOnly: boolean;
  privateList: BlockList;
  userAgent: string;
  /** How host names are resolved (default: the system's, node:dns lookup); a test names its own. */
  resolve?: Resolver;
}

/** node:dns lookup with `all: true`: every address of a host name. */
export type Resolver = (hostname: string, options: LookupOptions & { all: true }, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const MAX_ERROR_BODY = 300;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Sends one webhook request with node:http(s): keep-alive agents owned by the sender (one
 * instance per app, destroyed on close), a hard overall timeout, no redirects followed, and in
 * public-only mode a DNS lookup hook that refuses private addresses at connect time (so a DNS
 * name cannot point the service at the LAN).
 */
export class WebhookSender {
  private readonly options: SenderOptions;
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 4 });

  constructor(options: SenderOptions) {
    this.options = options;
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  send(message: OutgoingMessage, signal: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    const { timeoutMs, publicOnly, privateList, userAgent } = this.options;
    const resolveHost = this.options.resolve ?? dnsLookup;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined = undefined; // set below; finish() may run first
      let onAbort = () => {};
      const finish = (statusCode: number | null, error: string | null, aborted = false) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve({ statusCode, error, durationMs: Math.max(0, Math.round(performance.now() - started)), aborted });
      };

      let url: URL;
      try {
        url = new URL(message.url);
      } catch {
        finish(null, 'Invalid URL');
        return;
      }
      const secure = url.protocol === 'https:';
      if (publicOnly && isPrivateAddress(privateList, url.hostname)) {
        finish(null, 'Refused: the receiver address is private or loopback (public-only mode)');
        return;
      }
      const lookup =
        publicOnly || this.options.resolve
          ? (hostname: string, opts: LookupOptions, callback: LookupCallback) => {
              resolveHost(hostname, { ...opts, all: true }, (err, list) => {
                if (err) return callback(err, '');
                const bad = publicOnly ? list.find((a) => isPrivateAddress(privateList, a.address)) : undefined;
                if (bad) {
                  return callback(Object.assign(new Error(`Refused: ${hostname} resolves to a private address (${bad.address})`), { code: 'EPRIVATE' }), '');
                }
                if (opts.all) return callback(null, list);
                return callback(null, list[0]!.address, list[0]!.family);
              });
            }
          : undefined;

      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: {
          ...message.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(message.body)),
          'user-agent': userAgent,
        },
        ...(lookup ? { lookup: lookup as unknown as typeof dnsLookup } : {}),
      });

      onAbort = () => {
        req.destroy();
        finish(null, 'Aborted (service stopping)', true);
      };
      timer = setTimeout(() => {
        req.destroy();
        finish(null, `Timed out after ${timeoutMs / 1000} s`);
      }, timeoutMs);
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });

      req.on('error', (err: NodeJS.ErrnoException) => {
        finish(null, describeError(err));
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < MAX_ERROR_BODY) body += chunk;
        });
        res.on('end', () => {
          if (status >= 200 && status < 300) finish(status, null);
          else {
            const excerpt = body.replace(/\s+/g, ' ').trim().slice(0, MAX_ERROR_BODY);
            finish(status, `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`);
          }
        });
        res.on('error', (err) => finish(status, describeError(err)));
      });
      req.end(message.body);
    });
  }
}

function describeError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
      return 'Connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Host not found (${err.code})`;
    case 'EPRIVATE':
      return err.message;
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message;
  }
}
