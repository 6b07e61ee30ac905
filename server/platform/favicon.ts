/**
 * Waymark's icon (the console's brand mark), one SVG for the console (served at /favicon.svg)
 * and the scan pages (inlined as a data: URL, so that a scan domain proxied to /v/ only still
 * shows it and a scan costs no second request).
 */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#4f7cff"/><stop offset="1" stop-color="#22c3a6"/></linearGradient></defs><rect width="32" height="32" rx="8" fill="url(#g)"/><rect x="9.5" y="9.5" width="13" height="13" rx="3" fill="none" stroke="#fff" stroke-width="3"/></svg>';

export const FAVICON_DATA_URL = `data:image/svg+xml,${encodeURIComponent(FAVICON_SVG)}`;
