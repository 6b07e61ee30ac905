import { describe, expect, it } from 'vitest';
import { buildVcard, foldLine } from '../../functionTypes/vcard/encode.ts';
import { buildWifiString, escapeWifi } from '../../functionTypes/wifi/encode.ts';
import { escapeHtml } from './pages.ts';
import { renderAction } from '../../functionTypes/action/index.ts';
import { renderMicrosite } from '../../functionTypes/microsite/index.ts';
import { classifyUserAgent, clientIp, headerCountry, visitorHash } from './visitor.ts';
import { canonicalSlug, parseScanPath } from './handler.ts';
import { parseVcard } from '../../../test/scans/vcard-reader.ts';

describe('vCard 3.0', () => {
  it('escapes and folds, and reads back to the same values', () => {
    const p = {
      first_name: 'Zoë',
      last_name: 'Dupont-Léger; Jr.',
      organization: 'Acme, Inc.\\R&D',
      job_title: 'Technicienne de maintenance des installations électriques, bâtiment Nord — équipe de nuit',
      email: 'zoe@example.com',
      phone: '+33 6 12 34 56 78',
      website: 'https://example.com/a,b;c',
    };
    const text = buildVcard(p);
    const props = parseVcard(text);
    const get = (n: string) => props.find((x) => x.name === n)?.value;
    expect(get('BEGIN')).toBe('VCARD');
    expect(get('VERSION')).toBe('3.0');
    expect(get('N')).toBe('Dupont-Léger; Jr.;Zoë;;;'.replace('; Jr.', '; Jr.'));
    expect(get('FN')).toBe('Zoë Dupont-Léger; Jr.');
    expect(get('ORG')).toBe('Acme, Inc.\\R&D');
    expect(get('TITLE')).toBe(p.job_title);
    expect(get('TEL')).toBe(p.phone);
    expect(get('EMAIL')).toBe(p.email);
    expect(get('URL')).toBe(p.website);
    expect(text).toContain('ORG:Acme\\, Inc.\\\\R&D');
    expect(text).toContain('N:Dupont-Léger\\; Jr.;Zoë;;;');
    expect(text.split('\r\n').some((l) => l.startsWith(' '))).toBe(true); // TITLE was folded
  });

  it('folds on character boundaries', () => {
    const line = `NOTE:${'é'.repeat(100)}`;
    const folded = foldLine(line);
    for (const part of folded.split('\r\n')) {
      expect(Buffer.byteLength(part, 'utf8')).toBeLessThanOrEqual(75);
      expect(part).not.toContain('\uFFFD');
    }
    expect(folded.replace(/\r\n /g, '')).toBe(line);
  });

  it('escapes newlines in text', () => {
    const props = parseVcard(buildVcard({ first_name: 'A\nB' }));
    expect(props.find((x) => x.name === 'FN')?.value).toBe('A\nB');
  });
});

describe('WIFI: strings', () => {
  it('escapes \\ ; , : and "', () => {
    expect(escapeWifi('a\\b;c,d:e"f')).toBe('a\\\\b\\;c\\,d\\:e\\"f');
    expect(buildWifiString({ ssid: 'Café "Guest";', password: 'pa:ss;wo,rd\\1', security: 'WPA2' })).toBe(
      'WIFI:T:WPA;S:Café \\"Guest\\"\\;;P:pa\\:ss\\;wo\\,rd\\\\1;;',
    );
    expect(buildWifiString({ ssid: 'Open', security: 'nopass' })).toBe('WIFI:T:nopass;S:Open;;');
    expect(buildWifiString({ ssid: 'Old', password: '12345', security: 'WEP' })).toBe('WIFI:T:WEP;S:Old;P:12345;;');
  });
});

describe('HTML and links', () => {
  it('escapes every user string', () => {
    expect(escapeHtml(`<script>"x" & 'y'</script>`)).toBe('&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;');
    const page = renderMicrosite({ title: '<img src=x onerror=alert(1)>', body: '</p><script>alert(1)</script>', links: [{ label: '"><b>', url: 'javascript:alert(1)' }] });
    expect(page.body).not.toContain('<img src=x');
    expect(page.body).not.toContain('<script>alert');
    expect(page.body).not.toContain('javascript:');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
  });

  it('builds messaging links', () => {
    expect(renderAction({ action_type: 'whatsapp', phone: '+1 (555) 010-0199', message: 'Hi & bye?' })).toEqual({
      redirect: 'https://wa.me/15550100199?text=Hi%20%26%20bye%3F',
    });
    expect(renderAction({ action_type: 'telegram', phone: '+44 20 7946 0000' })).toEqual({ redirect: 'https://t.me/+442079460000' });
    const sms = renderAction({ action_type: 'sms', phone: '+1 555 0100', message: 'Room 12 & 13' });
    expect('page' in sms && sms.page.body).toContain('href="sms:+15550100?&amp;body=Room%2012%20%26%2013"');
    const mail = renderAction({ action_type: 'email', email: 'desk@example.com', message: 'Hello' });
    expect('page' in mail && mail.page.body).toContain('href="mailto:desk@example.com?body=Hello"');
    const call = renderAction({ action_type: 'call', phone: '+1 555 0100' });
    expect('page' in call && call.page.body).toContain('href="tel:+15550100"');
  });
});

describe('visitors', () => {
  it('classifies devices, systems and bots', () => {
    const iphone = classifyUserAgent('Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1');
    expect(iphone).toMatchObject({ device_type: 'mobile', os: 'ios', is_bot: false });
    expect(classifyUserAgent('Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1')).toMatchObject({ device_type: 'tablet', os: 'ios' });
    expect(classifyUserAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36')).toMatchObject({ device_type: 'desktop', os: 'windows', browser: 'Chrome' });
    expect(classifyUserAgent('Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0')).toMatchObject({ device_type: 'desktop', os: 'linux' });
    expect(classifyUserAgent('Mozilla/5.0 (X11; U; FreeBSD amd64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36')).toMatchObject({ device_type: 'unknown', os: 'other', is_bot: false });
    expect(classifyUserAgent('SomethingNew/1.0')).toMatchObject({ device_type: 'unknown', os: 'unknown' });
    for (const bot of ['', 'facebookexternalhit/1.1', 'WhatsApp/2.23.20.0 A', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'TelegramBot (like TwitterBot)', 'curl/8.5.0', 'Googlebot/2.1 (+http://www.google.com/bot.html)']) {
      expect(classifyUserAgent(bot).is_bot).toBe(true);
    }
  });

  it('trusts proxy headers only when told to', () => {
    const h = { 'x-forwarded-for': '203.0.113.7, 10.0.0.1', 'cf-ipcountry': 'de' };
    expect(clientIp('::ffff:127.0.0.1', h, false)).toBe('127.0.0.1');
    expect(clientIp('127.0.0.1', h, true)).toBe('203.0.113.7');
    expect(clientIp('127.0.0.1', { 'x-forwarded-for': 'garbage' }, true)).toBe('127.0.0.1');
    expect(headerCountry(h, false)).toBeUndefined();
    expect(headerCountry(h, true)).toBe('DE');
    expect(headerCountry({ 'cf-ipcountry': 'XX' }, true)).toBeNull();
    expect(headerCountry({}, true)).toBeUndefined();
  });

  it('visitor keys depend on salt, IP and User-Agent', () => {
    const k = visitorHash('salt1', '203.0.113.7', 'UA');
    expect(k).toHaveLength(22);
    expect(visitorHash('salt1', '203.0.113.7', 'UA')).toBe(k);
    expect(visitorHash('salt2', '203.0.113.7', 'UA')).not.toBe(k);
    expect(visitorHash('salt1', '203.0.113.8', 'UA')).not.toBe(k);
    expect(visitorHash('salt1', '203.0.113.7', 'UA2')).not.toBe(k);
  });
});

describe('scan paths', () => {
  it('matches case-insensitively, with Crockford aliases and ?nfc', () => {
    expect(canonicalSlug('abcdefgh')).toBe('ABCDEFGH');
    expect(canonicalSlug('o1lI0000')).toBe('01110000');
    expect(canonicalSlug('ABCDEFGU')).toBeNull();
    expect(canonicalSlug('ABC')).toBeNull();
    expect(parseScanPath('/v/abcdefgh')).toEqual({ slug: 'ABCDEFGH', contact: false, source: 'qr', query: null });
    expect(parseScanPath('/V/ABCDEFGH?nfc')).toEqual({ slug: 'ABCDEFGH', contact: false, source: 'nfc_unverified', query: 'nfc' });
    expect(parseScanPath('/v/ABCDEFGH/?NFC=1&x=2')).toMatchObject({ source: 'nfc_unverified', query: 'NFC=1&x=2' });
    // A tap proof's parameters are read later from the query; alone they do not mark a tag URL yet.
    expect(parseScanPath('/v/ABCDEFGH?picc=00&cmac=11')).toMatchObject({ source: 'qr', query: 'picc=00&cmac=11' });
    expect(parseScanPath('HTTP://EXAMPLE.COM/V/ABCDEFGH')).toMatchObject({ slug: 'ABCDEFGH' });
    expect(parseScanPath('/v/ABCDEFGH/contact.vcf')).toMatchObject({ slug: 'ABCDEFGH', contact: true });
    expect(parseScanPath('/v/ABCDEFGH/other')).toMatchObject({ slug: null });
    expect(parseScanPath('/v1/nodes')).toBeNull();
    expect(parseScanPath('/version')).toBeNull();
  });
});
