import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import express, { type Express, type Request, type Response } from 'express';

/** Where `npm run build:console` (or `npm run build`) writes the console. */
export const DEFAULT_CONSOLE_DIR = resolve(import.meta.dirname, '..', '..', 'out', 'renderer');

/**
 * The console's Content Security Policy: only this origin's scripts, styles and API; images
 * also from data:/blob: (QR previews fetched with the key). No inline script, no framing,
 * no plugins, no form posts elsewhere. Electron main applies the same policy to its window.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

function securityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=()');
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function notBuiltPage(dir: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Waymark console not built</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1f2933}
code,pre{background:#f0f2f5;border-radius:4px;padding:.1rem .3rem}pre{padding:.75rem}</style></head>
<body><h1>The Waymark console has not been built</h1>
<p>The API is running, but the console's files are missing from <code>${escapeHtml(dir)}</code>.</p>
<p>Build it from the project folder, then reload this page:</p>
<pre>npm run build:console</pre>
<p><code>npm install</code> and <code>npm run serve</code> build it automatically.</p>
</body></html>`;
}

export interface ConsoleOptions {
  /** Folder holding the built console (index.html + assets/). */
  dir?: string;
}

/**
 * Serves the built console at /console/: hashed files under /console/assets/ are cached for a
 * year (immutable), everything else is revalidated; any other path under /console/ that is not
 * a file gets index.html (client-side routes). When the build is missing, /console/ answers a
 * page that says how to build it.
 */
export function mountConsole(app: Express, options: ConsoleOptions = {}): void {
  const dir = resolve(options.dir ?? DEFAULT_CONSOLE_DIR);
  const indexFile = join(dir, 'index.html');
  let cachedIndex: { mtimeMs: number; html: string } | undefined;

  const readIndex = (): string | undefined => {
    if (!existsSync(indexFile)) return undefined;
    const { mtimeMs } = statSync(indexFile);
    if (!cachedIndex || cachedIndex.mtimeMs !== mtimeMs) cachedIndex = { mtimeMs, html: readFileSync(indexFile, 'utf8') };
    return cachedIndex.html;
  };

  const sendIndex = (req: Request, res: Response) => {
    securityHeaders(res);
    res.setHeader('Cache-Control', 'no-cache');
    const html = readIndex();
    if (html === undefined) {
      res.setHeader('Cache-Control', 'no-store');
      res.status(503).type('html').send(notBuiltPage(dir));
      return;
    }
    res.status(200).type('html').send(req.method === 'HEAD' ? '' : html);
  };

  app.get('/console', (req, res, next) => {
    // Express matches /console/ here too (non-strict routing): only the bare path redirects.
    const [path, query] = req.originalUrl.split('?', 2);
    if (path !== '/console') return next();
    res.redirect(301, `/console/${query ? `?${query}` : ''}`);
  });

  const assets = express.static(join(dir, 'assets'), {
    index: false,
    fallthrough: false,
    immutable: true,
    maxAge: '365d',
    setHeaders: (res) => securityHeaders(res as unknown as Response),
  });
  app.use('/console/assets', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    assets(req, res, (err?: unknown) => {
      if (err) {
        res.setHeader('Cache-Control', 'no-store');
        res.status(404).type('text').send('Not found');
        return;
      }
      next();
    });
  });

  app.use('/console', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const path = decodeSafe(req.path);
    if (path === undefined) return next();
    if (path === '/' || path === '/index.html') return sendIndex(req, res);
    // Other top-level files of the build (favicon …): served if present, revalidated.
    const file = resolve(dir, `.${path}`);
    if (/\.[a-z0-9]+$/i.test(path)) {
      if (file.startsWith(dir + sep) && existsSync(file) && statSync(file).isFile()) {
        securityHeaders(res);
        res.setHeader('Cache-Control', 'no-cache');
        res.sendFile(file);
        return;
      }
      return next();
    }
    return sendIndex(req, res);
  });
}

function decodeSafe(path: string): string | undefined {
  try {
    const decoded = decodeURIComponent(path);
    return decoded.includes('\0') ? undefined : decoded;
  } catch {
    return undefined;
  }
}
