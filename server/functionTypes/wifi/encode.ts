/** The WIFI: string for a Wi-Fi QR code. Pure. */
import type { WifiPayloadT } from './schema.ts';

/** Escapes a WIFI: field: backslash, semicolon, comma, colon and double quote get a backslash. */
export function escapeWifi(value: string): string {
  return value.replace(/([\\;,:"])/g, '\\$1');
}

/**
 * The `WIFI:` string that phone cameras join from (ZXing's format). WPA, WPA2 and WPA3 personal
 * are all written `T:WPA` (the value phones accept for any WPA generation; the network and the
 * phone negotiate WPA3-SAE themselves), WEP as `T:WEP`, an open network as `T:nopass`.
 */
export function buildWifiString(p: WifiPayloadT): string {
  const security = p.security ?? 'WPA2';
  const type = security === 'nopass' ? 'nopass' : security === 'WEP' ? 'WEP' : 'WPA';
  let out = `WIFI:T:${type};S:${escapeWifi(p.ssid)};`;
  if (type !== 'nopass' && p.password) out += `P:${escapeWifi(p.password)};`;
  return out + ';';
}
