import { escapeHtml, renderPage, type Rendered } from '../../features/scans/pages.ts';
import { qrSvgSync } from '../../features/scans/qr.ts';
import { defineFunctionType } from '../define.ts';
import { buildWifiString } from './encode.ts';
import { WifiPayload, type WifiPayloadT } from './schema.ts';

export function renderWifiPage(p: WifiPayloadT): Rendered {
  const security = p.security ?? 'WPA2';
  const hasPassword = security !== 'nopass' && !!p.password;
  const qr = qrSvgSync(buildWifiString(p), { ecc: 'M', margin: 2, title: `QR code to join ${p.ssid}` });
  return renderPage({
    status: 200,
    title: `Wi-Fi: ${p.ssid}`,
    script: hasPassword,
    body: `<article class="card">
<div class="band"></div>
<h1>Join the Wi-Fi</h1>
<dl>
<dt>Network name</dt><dd>${escapeHtml(p.ssid)}</dd>
${
  hasPassword
    ? `<dt id="pw-label">Password</dt><dd><div class="secret"><code id="pw" aria-labelledby="pw-label">${escapeHtml(p.password)}</code><button type="button" class="btn" data-copy="pw" hidden>Copy</button></div></dd>`
    : '<dt>Password</dt><dd>None (open network)</dd>'
}
<dt>Security</dt><dd>${escapeHtml(security === 'nopass' ? 'Open' : security)}</dd>
</dl>
<div class="qr">${qr}</div>
<p class="hint">On another phone, scan this code with the camera to join.</p>
</article>`,
  });
}

export const wifi = defineFunctionType({
  schema: WifiPayload,
  respond: (p) => ({ kind: 'page', rendered: renderWifiPage(p) }),
});
