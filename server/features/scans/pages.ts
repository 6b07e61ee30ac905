/**
 * Server-rendered scan pages: the frame every page shares and the status pages (each function
 * type's own page is in its folder under server/functionTypes/). Small, mobile-first,
 * accessible HTML with every user-supplied string escaped and a strict Content-Security-Policy
 * (styles and the one tiny script are allowed by hash only; nothing else may load except images
 * of microsites and cards).
 */
import { createHash } from 'node:crypto';
import { FAVICON_DATA_URL } from '../../platform/favicon.ts';
import { readableOn, textOn } from './contrast.ts';

export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Only http(s) URLs become links or images; anything else is dropped. */
export function safeHttpUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

const hashCache = new Map<string, string>();
function sha256(text: string): string {
  let h = hashCache.get(text);
  if (!h) {
    h = `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
    if (hashCache.size > 1000) hashCache.clear();
    hashCache.set(text, h);
  }
  return h;
}

/** The two colour schemes' surfaces; text drawn in the accent must reach 4.5:1 on both of a scheme's. */
const LIGHT = { bg: '#f4f5f7', card: '#ffffff' };
const DARK = { bg: '#111214', card: '#1c1d21' };
const DEFAULT_ACCENT = '#0b57d0';

/**
 * The accent and what is drawn with it: `--on-accent` for text on a filled button, `--link` for
 * links and outline buttons, per scheme (a dark blue link on a dark card is 2.6:1).
 */
function accentCss(accent: string): string {
  const light = readableOn(accent, [LIGHT.card, LIGHT.bg]);
  const dark = readableOn(accent, [DARK.card, DARK.bg]);
  return `:root{--accent:${accent};--on-accent:${textOn(accent)};--link:${light}}\n@media (prefers-color-scheme:dark){:root{--link:${dark}}}`;
}

const BASE_CSS = `:root{color-scheme:light dark;--bg:${LIGHT.bg};--card:${LIGHT.card};--text:#1b1c1f;--muted:#5d6168;--line:#e2e4e8}
@media (prefers-color-scheme:dark){:root{--bg:${DARK.bg};--card:${DARK.card};--text:#eceef2;--muted:#a4a8b0;--line:#2c2e33}}
${accentCss(DEFAULT_ACCENT)}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;min-height:100vh;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;display:flex;justify-content:center;align-items:flex-start}
main{width:100%;max-width:28rem;padding:1.25rem 1rem 2rem}
.card{overflow:hidden;background:var(--card);border:1px solid var(--line);border-radius:1rem;padding:1.5rem 1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.06)}
.band{height:.375rem;border-radius:1rem 1rem 0 0;background:var(--accent);margin:-1.5rem -1.25rem 1.25rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .25rem;overflow-wrap:anywhere}
.sub{color:var(--muted);margin:0 0 1rem;overflow-wrap:anywhere}
.avatar{width:6rem;height:6rem;border-radius:50%;object-fit:cover;display:block;margin:0 auto 1rem;background:var(--line)}
.hero{width:100%;max-height:16rem;object-fit:cover;border-radius:.75rem;display:block;margin:0 0 1rem;background:var(--line)}
.center{text-align:center}
.body{white-space:pre-line;overflow-wrap:anywhere;margin:0 0 1rem}
dl{margin:0 0 1rem}
dt{font-size:.8125rem;color:var(--muted);margin-top:.75rem}
dd{margin:0;font-size:1.0625rem;overflow-wrap:anywhere}
dd a{color:var(--link)}
.btn{display:block;width:100%;text-align:center;padding:.875rem 1rem;margin:.625rem 0 0;border-radius:.75rem;border:0;background:var(--accent);color:var(--on-accent);font:inherit;font-weight:600;text-decoration:none;cursor:pointer;min-height:3rem}
.btn.alt{background:transparent;color:var(--link);border:1.5px solid var(--link)}
.btn:focus-visible,a:focus-visible{outline:3px solid var(--text);outline-offset:2px}
.links{list-style:none;padding:0;margin:1rem 0 0}
.secret{display:flex;gap:.5rem;align-items:stretch;margin-top:.25rem}
.secret code{flex:1;font:1.0625rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--bg);border:1px solid var(--line);border-radius:.5rem;padding:.5rem .625rem;user-select:all;-webkit-user-select:all;overflow-wrap:anywhere}
.secret .btn{width:auto;margin:0;padding:.5rem .875rem;min-height:0}
.qr{display:block;width:min(16rem,100%);margin:1.25rem auto .25rem;background:#fff;border-radius:.5rem}
.qr svg{display:block;width:100%;height:auto}
.hint{font-size:.875rem;color:var(--muted);text-align:center;margin:.5rem 0 0}
form{text-align:left;margin-top:1rem}
label{display:block;font-weight:600;margin:0 0 .25rem}
input{display:block;width:100%;font:inherit;padding:.75rem;border:1.5px solid var(--muted);border-radius:.5rem;background:var(--card);color:var(--text);min-height:3rem}
input:focus-visible{outline:3px solid var(--text);outline-offset:2px}
.error{color:#b3261e;font-weight:600;margin:0 0 .5rem}
@media (prefers-color-scheme:dark){.error{color:#f2b8b5}}
.status{text-align:center;padding-top:2rem}
.status .code{font-size:.875rem;letter-spacing:.08em;text-transform:uppercase;color:var(--muted);margin:0 0 .5rem}
footer{font-size:.75rem;color:var(--muted);text-align:center;margin-top:1.25rem}`;

/**
 * The Wi-Fi page's Copy button. The Clipboard API exists only on secure origins (https or
 * localhost); a site's LAN box on plain http gets the fallback: the password is selected and
 * copied with execCommand('copy'), and if even that is refused it stays selected for the
 * visitor's own Copy.
 */
const COPY_SCRIPT = `document.querySelectorAll('[data-copy]').forEach(function(b){b.hidden=false;b.addEventListener('click',function(){var el=document.getElementById(b.getAttribute('data-copy'));function done(ok){b.textContent=ok?'Copied':'Selected: copy it';setTimeout(function(){b.textContent='Copy'},3000)}function select(){var r=document.createRange();r.selectNodeContents(el);var s=window.getSelection();s.removeAllRanges();s.addRange(r);var ok=false;try{ok=document.execCommand('copy')}catch(e){}done(ok)}if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(el.textContent).then(function(){done(true)},select)}else{select()}})})`;

export interface HtmlPage {
  status: number;
  title: string;
  body: string;
  accent?: string;
  script?: boolean;
  /** Allow images from http(s) URLs (microsite / card pictures). */
  remoteImages?: boolean;
  /** The page has a form posting to this origin (the password page). */
  form?: boolean;
}

export interface Rendered {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function renderPage(page: HtmlPage): Rendered {
  const accent = page.accent && /^#[0-9A-Fa-f]{6}$/.test(page.accent) ? page.accent : null;
  const css = accent ? `${BASE_CSS}\n${accentCss(accent)}` : BASE_CSS;
  const csp = [
    "default-src 'none'",
    `style-src ${sha256(css)}`,
    page.script ? `script-src ${sha256(COPY_SCRIPT)}` : null,
    // data: for the inlined favicon.
    page.remoteImages ? 'img-src https: http: data:' : 'img-src data:',
    "base-uri 'none'",
    page.form ? "form-action 'self'" : "form-action 'none'",
    "frame-ancestors 'none'",
  ]
    .filter(Boolean)
    .join('; ');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)}</title>
<link rel="icon" type="image/svg+xml" href="${FAVICON_DATA_URL}">
<style>${css}</style>
</head>
<body>
<main>
${page.body}
</main>${page.script ? `\n<script>${COPY_SCRIPT}</script>` : ''}
</body>
</html>
`;
  return {
    status: page.status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-robots-tag': 'noindex',
    },
    body: html,
  };
}

// ---- status pages ----------------------------------------------------------------------------

export type StatusKind = 'paused' | 'retired' | 'deleted' | 'inactive' | 'unknown' | 'expired' | 'limit_reached' | 'password' | 'password_wrong' | 'unverified';

/** The password form: posts to the page's own address (no action attribute), so /v/<slug> or its contact.vcf. */
const PASSWORD_FORM = `<form method="post">
<label for="password">Password</label>
<input id="password" name="password" type="password" required maxlength="200" autocomplete="current-password" autofocus>
<button class="btn" type="submit">Open</button>
</form>`;

const STATUS_PAGES: Record<StatusKind, { status: number; code: string; title: string; text: string; error?: string; form?: boolean }> = {
  // A tag URL without a valid proof, on a node whose tap proof policy is 'refuse' (docs/nfc.md).
  unverified: {
    status: 403,
    code: 'Not verified',
    title: 'This tag could not be verified',
    text: 'This link did not come from a genuine tap of the tag, or it was used before. Tap the tag itself with your phone again; a copied or saved link does not open it.',
  },
  expired: {
    status: 410,
    code: 'Expired',
    title: 'This code has expired',
    text: 'The owner set this code to stop working after a date, and that date has passed.',
  },
  limit_reached: {
    status: 410,
    code: 'No longer available',
    title: 'This code has reached its scan limit',
    text: 'The owner allowed this code a set number of scans, and they have all been used.',
  },
  password: {
    status: 200,
    code: 'Protected',
    title: 'This code is password protected',
    text: 'Enter the password you were given to open it.',
    form: true,
  },
  password_wrong: {
    status: 403,
    code: 'Protected',
    title: 'This code is password protected',
    text: 'Enter the password you were given to open it.',
    error: 'That password is not right. Try again.',
    form: true,
  },
  paused: {
    status: 503,
    code: 'Temporarily unavailable',
    title: 'This code is paused',
    text: 'The owner has paused this code for now. Please try again later.',
  },
  retired: {
    status: 410,
    code: 'No longer in use',
    title: 'This code has been retired',
    text: 'The owner has retired this code. It will not lead anywhere any more.',
  },
  deleted: {
    status: 410,
    code: 'No longer in use',
    title: 'This code no longer exists',
    text: 'The owner has removed this code. It will not lead anywhere any more.',
  },
  inactive: {
    status: 404,
    code: 'Not active yet',
    title: 'This code is not active yet',
    text: 'This code has not been set up yet. If you have just put it up, give it a moment and scan again.',
  },
  unknown: {
    status: 404,
    code: 'Not found',
    title: 'We could not find this code',
    text: 'Check that the whole code is visible and scan it again, or type the address exactly as printed.',
  },
};

/** Status pages are the same for every node: rendered once per kind (and so compressed once, encoding.ts). */
const statusPages = new Map<StatusKind, Rendered>();

export function renderStatus(kind: StatusKind): Rendered {
  let rendered = statusPages.get(kind);
  if (!rendered) {
    rendered = renderStatusPage(kind);
    statusPages.set(kind, rendered);
  }
  return rendered;
}

function renderStatusPage(kind: StatusKind): Rendered {
  const p = STATUS_PAGES[kind];
  const rendered = renderPage({
    status: p.status,
    title: p.title,
    form: p.form === true,
    body: `<div class="card status"${p.form ? '' : ' role="status"'}>
<p class="code">${escapeHtml(p.code)}</p>
<h1>${escapeHtml(p.title)}</h1>
<p class="sub">${escapeHtml(p.text)}</p>${p.error ? `\n<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ''}${p.form ? `\n${PASSWORD_FORM}` : ''}
</div>`,
  });
  if (kind === 'paused') rendered.headers['retry-after'] = '3600';
  return rendered;
}

/** Too many wrong passwords from one address for one node: 429 until the window ends. */
export function renderPasswordLocked(retryAfterSeconds: number): Rendered {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  const rendered = renderPage({
    status: 429,
    title: 'Too many attempts',
    body: `<div class="card status" role="status">
<p class="code">Protected</p>
<h1>Too many attempts</h1>
<p class="sub">That password was wrong too many times. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.</p>
</div>`,
  });
  rendered.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  return rendered;
}

// ---- pieces the content pages share (server/functionTypes/*/page.ts) ----------------------

export function row(label: string, value: string | undefined, href?: string | null): string {
  if (!value) return '';
  const v = href ? `<a href="${escapeHtml(href)}">${escapeHtml(value)}</a>` : escapeHtml(value);
  return `<dt>${escapeHtml(label)}</dt><dd>${v}</dd>`;
}

export function telHref(phone: string): string {
  return `tel:${phone.replace(/[^0-9+]/g, '')}`;
}

export function linkList(links: unknown): string {
  if (!Array.isArray(links) || links.length === 0) return '';
  const items = links
    .map((l: { label?: unknown; url?: unknown }) => {
      const url = safeHttpUrl(l?.url);
      if (!url) return '';
      return `<li><a class="btn alt" href="${escapeHtml(url)}" rel="noopener noreferrer">${escapeHtml(l.label ?? url)}</a></li>`;
    })
    .join('');
  return items ? `<ul class="links">${items}</ul>` : '';
}
