import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import { BadRequestError, RateLimitError, UnauthorizedError, ValidationError } from '../platform/errors.ts';
import { parseOrThrow } from '../platform/validation.ts';
import type { AuthenticatedKey, KeyAuthenticator } from './auth.ts';
import type { Budget, RateLimiter } from './rateLimit.ts';

export interface RouteContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  auth: AuthenticatedKey;
  req: Request;
  res: Response;
  /** `{base_url}` as this client reached it, e.g. http://192.168.1.20:8787/v1 */
  apiBase: string;
}

/** What a handler returns: a JSON reply, or nothing when it wrote the response itself. */
export type Reply = { status?: number; data: unknown; total?: number } | undefined;

export interface ResponseDoc {
  description: string;
  /** Schema of `data`. */
  schema?: z.ZodType;
  /** `data` is an array of `schema` and the body adds `total`. */
  list?: boolean;
  /** Non-JSON content (CSV, PDF, SVG …). */
  content?: Record<string, { schema: z.ZodType }>;
  /** Headers this response carries beside the ones every response has (X-Request-Id, X-RateLimit-*). */
  headers?: Record<string, HeaderDoc>;
  /** An example of the whole JSON body (`{data: …}`), shown in the document. */
  example?: unknown;
}

export interface HeaderDoc {
  description: string;
  schema: z.ZodType;
  /** Always sent with this response (default true). */
  required?: boolean;
}

export interface RouteSpec<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** OpenAPI-style path relative to /v1, e.g. `/nodes/{slug}`. */
  path: string;
  /** Unique across the API: the method name a generated client gets (e.g. `createNode`). */
  operationId: string;
  summary: string;
  tags: string[];
  body?: B;
  /**
   * The body as the document describes it, when it is stricter than `body`: create bodies whose
   * payload or conditions depend on function_type / rule_type. The runtime keeps parsing with
   * `body` and checks the rest in the service, so that errors keep the spec's paths and messages.
   */
  bodyDoc?: z.ZodType;
  /** An example request body, shown in the document. */
  bodyExample?: unknown;
  query?: Q;
  params?: P;
  /** Which rate budget the call counts against (default standard). */
  budget?: Budget;
  /** Largest JSON body accepted (default BODY_LIMIT, 64 KiB), e.g. '8mb' for sync pushes. */
  bodyLimit?: string;
  /**
   * Media types the body may also come in as text (e.g. `text/csv`), each with the function that
   * turns the text into the JSON form `body` then parses: the handler sees one shape either way.
   */
  textBodies?: Record<string, TextBody>;
  responses: Record<number, ResponseDoc>;
  handler: (ctx: RouteContext<z.infer<B>, z.infer<Q>, z.infer<P>>) => Reply | Promise<Reply>;
}

export interface TextBody {
  /** What the document says of this form. */
  description: string;
  /** The body's text as the JSON value `body` parses (throw an AppError for a malformed one). */
  parse: (text: string) => unknown;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRouteSpec = RouteSpec<any, any, any>;

export function defineRoute<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
  spec: RouteSpec<B, Q, P>,
): AnyRouteSpec {
  return spec;
}

export interface ApiDeps {
  keys: KeyAuthenticator;
  rateLimiter: RateLimiter;
}

function bearer(req: Request): string | undefined {
  const header = req.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** Authenticates, charges the rate budget and sets the X-RateLimit-* headers. */
export function guard(deps: ApiDeps, budget: Budget) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const auth = await deps.keys.authenticate(bearer(req));
    if (!auth) throw new UnauthorizedError();
    const decision = await deps.rateLimiter.check(auth.keyId, auth.limits, budget);
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.reset));
    if (!decision.allowed) {
      res.setHeader('Retry-After', String(decision.retryAfter));
      throw new RateLimitError(decision.retryAfter);
    }
    res.locals.auth = auth;
    next();
  };
}

export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** Mounts a route: guard, body/query/params parsing with zod, the handler, the JSON reply. */
export function mount(router: Router, deps: ApiDeps, spec: AnyRouteSpec, bodyParsers: ReadonlyArray<(req: Request, res: Response, next: NextFunction) => void>): void {
  // Only routes with a body read one: elsewhere a stray body is ignored, not a 400 or 413.
  const bodyParser = spec.body ? bodyParsers : [];
  router[spec.method](expressPath(spec.path), guard(deps, spec.budget ?? 'standard'), ...bodyParser, async (req: Request, res: Response) => {
    let body: unknown;
    const textType = spec.textBodies && typeof req.body === 'string' ? Object.keys(spec.textBodies).find((type) => req.is(type)) : undefined;
    if (spec.body && textType !== undefined) {
      const converted = spec.textBodies![textType]!.parse(req.body as string);
      const nul = nulPath(converted);
      if (nul !== undefined) throw new ValidationError({ [nul]: 'must not contain NUL characters (\\u0000)' });
      body = parseOrThrow(spec.body, converted);
    } else if (spec.body) {
      if (req.body === undefined || !req.is('application/json')) {
        const others = Object.keys(spec.textBodies ?? {});
        throw new BadRequestError(`Request body must be JSON (Content-Type: application/json${others.map((t) => ` or ${t}`).join('')})`);
      }
      if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
        throw new BadRequestError('Request body must be a JSON object');
      }
      const proto = protoKeyPath(req.body);
      if (proto !== undefined) throw new ValidationError({ [proto]: 'is not a known field' });
      const nul = nulPath(req.body);
      if (nul !== undefined) throw new ValidationError({ [nul]: 'must not contain NUL characters (\\u0000)' });
      body = parseOrThrow(spec.body, req.body);
    }
    // PostgreSQL's text cannot hold a NUL character (SQLite's can): refused alike on both backends.
    if (nulPath(req.params) !== undefined) throw new BadRequestError('Path parameters must not contain NUL characters');
    const nulQuery = spec.query ? nulPath({ ...req.query }) : undefined;
    if (nulQuery !== undefined) throw new ValidationError({ [nulQuery]: 'must not contain NUL characters (\\u0000)' });
    const query = spec.query ? parseOrThrow(spec.query, { ...req.query }) : req.query;
    const params = spec.params ? parseOrThrow(spec.params, req.params) : req.params;
    const apiBase = `${req.protocol}://${req.get('host') ?? 'localhost'}/v1`;
    const reply = await spec.handler({ body, query, params, auth: res.locals.auth as AuthenticatedKey, req, res, apiBase });
    if (reply === undefined) return;
    const payload: Record<string, unknown> = { data: reply.data };
    if (reply.total !== undefined) payload.total = reply.total;
    res.status(reply.status ?? 200).json(payload);
  });
}

/**
 * The dotted path of the first `__proto__` key anywhere in a parsed JSON body, if any.
 * JSON.parse keeps it as an own key, but zod's record schemas copy objects by assignment, which
 * turns that key into the copy's prototype: the field would vanish from validation instead of
 * being rejected as unknown. Iterative, so a deeply nested body cannot overflow the stack.
 */
/** The path of the first key or string value holding a NUL character, if any. */
export function nulPath(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path || '(value)';
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    for (const [key, child] of Object.entries(v)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (key.includes('\u0000')) return childPath.replaceAll('\u0000', '\\u0000');
      stack.push({ value: child, path: childPath });
    }
  }
  return undefined;
}

export function protoKeyPath(body: unknown): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: body, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (key === '__proto__' && !Array.isArray(value)) return childPath;
      stack.push({ value: child, path: childPath });
    }
  }
  return undefined;
}
