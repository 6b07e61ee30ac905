import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../platform/errors.ts';

export interface ErrorLogger {
  error(message: string, err: unknown): void;
}

/** Where disk-full failures are counted (StorageHealth); the handler only reports them. */
export interface DiskFullReporter {
  failed(err: unknown, where: string): boolean;
}

export const INSUFFICIENT_STORAGE = 'Insufficient storage: free space on the data volume';

/**
 * True when `err` says the data volume is full: SQLite's SQLITE_FULL (better-sqlite3 sets
 * `code`), a file write's ENOSPC, and PostgreSQL's SQLSTATE 53100 disk_full (node-postgres
 * sets `code`) for the PostgreSQL backend. The one place that knows these codes.
 */
export function isDiskFull(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100') return true;
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isDiskFull(cause);
}

/** Maps every error to the spec's `{data: null, error}` body; never leaks a stack trace. */
export function errorHandler(logger: ErrorLogger, storage?: DiskFullReporter) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let status = 500;
    let body: Record<string, unknown> = { data: null, error: 'Internal server error' };
    if (isDiskFull(err)) {
      status = 507;
      body = { data: null, error: INSUFFICIENT_STORAGE };
      // Counted and logged as one line a minute, not a stack trace per request.
      if (!storage?.failed(err, `${req.method} ${req.path}`)) logger.error(`${req.method} ${req.originalUrl}: the data volume is full`, err);
    } else if (err instanceof AppError) {
      status = err.status;
      body = { data: null, error: err.message };
      if (err.details) body.details = err.details;
    } else if (isBodyParserError(err)) {
      if (err.type === 'entity.too.large') {
        status = 413;
        // body-parser reports the route's limit in bytes (64 KiB, or a route's own bodyLimit).
        const reported = (err as { limit?: unknown }).limit;
        const limit = typeof reported === 'number' ? reported : 64 * 1024;
        const text = limit >= 1024 * 1024 ? `${limit / (1024 * 1024)} MiB` : `${limit / 1024} KiB`;
        body = { data: null, error: `Request body too large (limit ${text})` };
      } else if (err.status >= 400 && err.status < 500) {
        status = 400;
        const text: Record<string, string> = {
          'entity.parse.failed': 'Malformed JSON body',
          'entity.empty': 'Request body must be a JSON object (it is empty)',
        };
        body = { data: null, error: text[err.type] ?? 'Request body could not be read' };
      }
    } else if (isClientError(err)) {
      // The router's own 400s, e.g. a path segment with malformed percent-encoding (`/nodes/%ZZ`).
      status = 400;
      body = { data: null, error: 'Malformed request URL' };
    }
    if (status === 500) logger.error(`${req.method} ${req.originalUrl} failed (request ${String(res.getHeader('X-Request-Id'))})`, err);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(status).json(body);
  };
}

function isClientError(err: unknown): boolean {
  return err instanceof URIError || (err instanceof Error && 'status' in err && err.status === 400);
}

function isBodyParserError(err: unknown): err is { type: string; status: number } {
  return typeof err === 'object' && err !== null && 'type' in err && 'status' in err;
}
