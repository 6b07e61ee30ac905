import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionTypeName, createNode, expectInvalid, validPayloads } from '../support/fixtures.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe('payload schemas per function type', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
  });
  afterAll(async () => {
    await server.close();
  });

  const create = (function_type: string, payload: unknown) => server.api('POST', '/nodes', { label: 'p', function_type, payload });

  it('rejects unknown payload keys for every type (strict)', async () => {
    for (const type of Object.keys(validPayloads) as FunctionTypeName[]) {
      expectInvalid(await create(type, { ...validPayloads[type], extra: 1 }), 'payload.extra', 'is not a known field');
    }
  });

  it('requires the main field of each type', async () => {
    const required: Record<FunctionTypeName, string> = {
      redirect: 'url',
      vcard: 'first_name',
      wifi: 'ssid',
      microsite: 'title',
      digital_card: 'name',
      action: 'action_type',
    };
    for (const [type, field] of Object.entries(required)) {
      const payload: Record<string, unknown> = { ...validPayloads[type as FunctionTypeName] };
      delete payload[field];
      expectInvalid(await create(type, payload), `payload.${field}`, 'is required');
    }
  });

  it('redirect url must be http(s) and at most 2048 characters', async () => {
    for (const url of ['javascript:alert(1)', 'ftp://example.com', 'example.com', 'https://', '', 42]) {
      expectInvalid(await create('redirect', { url }), 'payload.url');
    }
    expect((await create('redirect', { url: `https://example.com/${'a'.repeat(2048 - 20)}` })).status).toBe(201);
    expectInvalid(await create('redirect', { url: `https://example.com/${'a'.repeat(2048)}` }), 'payload.url');
    expect((await create('redirect', { url: 'HTTP://EXAMPLE.COM/X' })).status).toBe(201);
  });

  it('vcard: email, phone and website are checked; job_title is accepted', async () => {
    expect((await create('vcard', { first_name: 'A', job_title: 'CTO' })).status).toBe(201);
    expectInvalid(await create('vcard', { first_name: 'A', email: 'not-an-email' }), 'payload.email');
    expectInvalid(await create('vcard', { first_name: 'A', phone: 'call me' }), 'payload.phone');
    expectInvalid(await create('vcard', { first_name: 'A', website: 'javascript:x' }), 'payload.website');
  });

  it('wifi: security from the list (default WPA2), password required unless nopass, 8..63 for WPA*', async () => {
    expect((await create('wifi', { ssid: 'Cafe', password: '12345678' })).status).toBe(201); // default WPA2
    expectInvalid(await create('wifi', { ssid: 'Cafe' }), 'payload.password', /required/);
    expectInvalid(await create('wifi', { ssid: 'Cafe', password: '' }), 'payload.password', /required/);
    expectInvalid(await create('wifi', { ssid: 'Cafe', password: 'short', security: 'WPA2' }), 'payload.password', /8 to 63/);
    expectInvalid(await create('wifi', { ssid: 'Cafe', password: 'short', security: 'WPA3' }), 'payload.password');
    expectInvalid(await create('wifi', { ssid: 'Cafe', password: 'x'.repeat(64) }), 'payload.password');
    expect((await create('wifi', { ssid: 'Cafe', security: 'nopass' })).status).toBe(201);
    expect((await create('wifi', { ssid: 'Cafe', security: 'WEP', password: 'abcde' })).status).toBe(201);
    expectInvalid(await create('wifi', { ssid: 'Cafe', security: 'WPA4', password: '12345678' }), 'payload.security', /WPA2/);
    expectInvalid(await create('wifi', { ssid: '', security: 'nopass' }), 'payload.ssid');
    expectInvalid(await create('wifi', { ssid: 'x'.repeat(33), security: 'nopass' }), 'payload.ssid');
  });

  it('action: phone required except for email actions, which need an email', async () => {
    for (const action_type of ['whatsapp', 'telegram', 'sms', 'call']) {
      expect((await create('action', { action_type, phone: '+1 555 0100' })).status).toBe(201);
      expectInvalid(await create('action', { action_type, message: 'hi' }), 'payload.phone', /required/);
    }
    expect((await create('action', { action_type: 'email', email: 'a@example.com', message: 'hi' })).status).toBe(201);
    expectInvalid(await create('action', { action_type: 'email', phone: '+1 555 0100' }), 'payload.email', /required/);
    expectInvalid(await create('action', { action_type: 'fax', phone: '+1 555 0100' }), 'payload.action_type', /whatsapp/);
  });

  it('microsite and digital_card: colours, links (≤ 20, http only) and URLs are checked', async () => {
    expectInvalid(await create('microsite', { title: 'T', theme_color: 'red' }), 'payload.theme_color');
    const links = Array.from({ length: 21 }, (_, i) => ({ label: `L${i}`, url: 'https://example.com' }));
    expectInvalid(await create('microsite', { title: 'T', links }), 'payload.links');
    expect((await create('microsite', { title: 'T', links: links.slice(0, 20) })).status).toBe(201);
    expectInvalid(await create('microsite', { title: 'T', links: [{ label: 'x', url: 'javascript:alert(1)' }] }), 'payload.links.0.url');
    expectInvalid(await create('microsite', { title: 'T', links: [{ label: 'x', url: 'https://a.b', icon: 'x' }] }), 'payload.links.0.icon');
    expectInvalid(await create('digital_card', { name: 'N', avatar_url: 'data:image/png;base64,AAA' }), 'payload.avatar_url');
    expectInvalid(await create('digital_card', { name: '' }), 'payload.name');
  });

  it('PATCH merges the payload as JSON Merge Patch: only sent keys change, null removes a key', async () => {
    const { slug } = await createNode(server, 'vcard');
    const res = await server.api('PATCH', `/nodes/${slug}`, { payload: { last_name: 'Byron', phone: null, email: null } });
    expect(res.status).toBe(200);
    const { phone: _p, email: _e, ...rest } = validPayloads.vcard;
    expect(res.body.data.payload).toEqual({ ...rest, last_name: 'Byron' });
    expect((await server.api('GET', `/nodes/${slug}`)).body.data.payload).toEqual({ ...rest, last_name: 'Byron' });
  });

  it('PATCH validates the merged result: removing a required field or adding an unknown one is 422 and changes nothing', async () => {
    const { slug } = await createNode(server, 'wifi');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { payload: { ssid: null } }), 'payload.ssid', 'is required');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { payload: { password: null } }), 'payload.password');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { payload: { hidden: true } }), 'payload.hidden');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { label: 'new', payload: 'ssid=x' }), 'payload');
    // A switch to nopass may drop the password in the same patch.
    const ok = await server.api('PATCH', `/nodes/${slug}`, { payload: { security: 'nopass', password: null } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.payload).toEqual({ ssid: 'Guest', security: 'nopass' });
    const got = (await server.api('GET', `/nodes/${slug}`)).body.data;
    expect(got.label).toBe('wifi node');
  });

  it('PATCH that changes function_type replaces the payload, which must be complete for the new type', async () => {
    const { slug } = await createNode(server, 'redirect');
    const partial = await server.api('PATCH', `/nodes/${slug}`, { function_type: 'wifi', payload: { ssid: 'Lobby' } });
    expectInvalid(partial, 'payload.password');
    const missing = await server.api('PATCH', `/nodes/${slug}`, { function_type: 'vcard' });
    expectInvalid(missing, 'payload.first_name', 'is required');
    // The old redirect url is not carried over into the new payload.
    const carried = await server.api('PATCH', `/nodes/${slug}`, { function_type: 'action', payload: { action_type: 'sms', phone: '+1 555 0100', url: 'https://x.y' } });
    expectInvalid(carried, 'payload.url', 'is not a known field');
    expect((await server.api('GET', `/nodes/${slug}`)).body.data).toMatchObject({ function_type: 'redirect', payload: validPayloads.redirect });

    const ok = await server.api('PATCH', `/nodes/${slug}`, { function_type: 'wifi', payload: { ssid: 'Lobby', security: 'nopass' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ function_type: 'wifi', payload: { ssid: 'Lobby', security: 'nopass' } });
    // Same function_type is not a change: the payload merges as usual.
    const same = await server.api('PATCH', `/nodes/${slug}`, { function_type: 'wifi', payload: { ssid: 'Hall' } });
    expect(same.body.data.payload).toEqual({ ssid: 'Hall', security: 'nopass' });
  });

  it('rejects payload keys named like Object.prototype members or __proto__', async () => {
    expectInvalid(await server.api('POST', '/nodes', '{"label":"a","function_type":"redirect","payload":{"url":"https://a.b","__proto__":{"x":1}}}'), 'payload.__proto__');
    expectInvalid(await create('redirect', { url: 'https://a.b', constructor: 'x' }), 'payload.constructor');
    const { slug } = await createNode(server, 'redirect');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, '{"payload":{"__proto__":{"url":"javascript:alert(1)"}}}'), 'payload.__proto__');
    expectInvalid(await server.api('PATCH', `/nodes/${slug}`, { payload: { toString: 'x' } }), 'payload.toString');
    expect((await server.api('GET', `/nodes/${slug}`)).body.data.payload).toEqual(validPayloads.redirect);
  });
});
