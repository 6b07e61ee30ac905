import compression from 'compression';
import express, { type Express, type Request, type Response } from 'express';
import { FAVICON_SVG } from '../platform/favicon.ts';
import { NotFoundError } from '../platform/errors.ts';
import { errorHandler, type ErrorLogger } from './errors.ts';
import type { StorageHealth } from './storageHealth.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { type AnyRouteSpec, type ApiDeps, mount } from './route.ts';

export interface HttpAppOptions extends ApiDeps {
  routes: readonly AnyRouteSpec[];
  trustProxy: boolean;
  version: string;
  logger: ErrorLogger;
  /** Whether the data volume takes writes: /healthz reports it, 507s and successful writes feed it. */
  storage?: StorageHealth;
  /** Extra mounts outside /v1 (console static files, metrics …), applied before the 404. */
  extend?: (app: Express) => void;
}

export const BODY_LIMIT = '64kb';

/** The Express side of the server: /healthz, /v1 (API + openapi.json) and whatever `extend` adds. */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy);
  app.set('json spaces', 0);
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });

  // gzip or brotli when the client accepts them (JSON, the console's files, SVG previews, CSV).
  // Event streams stay uncompressed: a compressor would hold each event back until its buffer
  // fills. PDFs and PNGs are left alone by compression's own filter (already compressed).
  app.use(compression({ filter: (req, res) => !String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') && compression.filter(req, res) }));

  app.get('/favicon.svg', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.type('image/svg+xml').send(FAVICON_SVG);
  });
  app.get('/favicon.ico', (_req, res) => res.redirect(301, '/favicon.svg'));

  app.get('/healthz', (_req, res) => {
    const storage = options.storage?.status() ?? { ok: true };
    if (storage.ok) res.json({ status: 'ok', version: options.version });
    else res.status(503).json({ status: 'failing', version: options.version, reason: storage.reason });
  });

  let openapi: object | undefined;
  app.get('/v1/openapi.json', (_req, res) => {
    openapi ??= buildOpenApiDocument(options.routes, options.version);
    res.json(openapi);
  });

  const api = express.Router();
  const jsonParser = (limit: string) => express.json({
    limit,
    // Not strict: `null`, `true` or `12.5` parse, and the route answers the same 400 as for `[]`
    // ("Request body must be a JSON object") instead of "Malformed JSON body".
    strict: false,
    // body-parser reads an empty JSON body as {}; DESIGN makes a body that is not a JSON object a
    // 400, and an empty one is not (else an empty POST got 422 "is required" for every field).
    verify: (_req, _res, buf) => {
      if (buf.length === 0) throw Object.assign(new Error('Empty JSON body'), { status: 400, type: 'entity.empty' });
    },
  });
  const json = jsonParser(BODY_LIMIT);
  const storage = options.storage;
  if (storage) {
    // A write that went through tells a volume that was full has room again.
    api.use((req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') res.once('finish', () => res.statusCode < 400 && storage.succeeded());
      next();
    });
  }
  for (const route of options.routes) {
    const parsers = [route.bodyLimit ? jsonParser(route.bodyLimit) : json];
    // Text forms of a body (CSV …) are read as UTF-8 text under the same limit.
    if (route.textBodies) parsers.push(express.text({ type: Object.keys(route.textBodies), limit: route.bodyLimit ?? BODY_LIMIT }));
    mount(api, options, route, parsers);
  }
  app.use('/v1', api);

  options.extend?.(app);

  app.use((_req: Request, _res: Response) => {
    throw new NotFoundError();
  });
  app.use(errorHandler(options.logger, options.storage));
  return app;
}
