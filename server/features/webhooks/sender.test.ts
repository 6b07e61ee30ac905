import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../../../test/support/receiver.ts';
import { createPrivateAddressList, embeddedIPv4, isLoopbackListen, isPrivateAddress, isPrivateHost } from './address.ts';
import { type Resolver, WebhookSender } from './sender.ts';

const privateList = createPrivateAddressList();
const message = (url: string) => ({ url, headers: { 'webhook-id': 'evt_1' }, body: '{"type":"webhook.test"}' });

describe('private address detection', () => {
  it('knows loopback, private, link-local and mapped addresses from public ones', () => {
    for (const ip of ['127.0.0.1', '127.9.9.9', '10.0.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd12::1', 'fe80::1', '::ffff:10.0.0.1', '[::1]']) {
      expect(isPrivateAddress(privateList, ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(privateList, ip), ip).toBe(false);
    }
    expect(isPrivateHost(privateList, 'localhost')).toBe(true);
    expect(isPrivateHost(privateList, 'LOCALHOST.')).toBe(true);
    expect(isPrivateHost(privateList, 'hooks.localhost')).toBe(true);
    expect(isPrivateHost(privateList, 'hooks.example.com')).toBe(false);
  });

  it('judges IPv6 forms that carry an IPv4 address by that address, whatever the notation', () => {
    // How the URL parser hands them over: `http://[::127.0.0.1]/` has hostname `[::7f00:1]`.
    expect(new URL('http://[::127.0.0.1]/').hostname).toBe('[::7f00:1]');
    expect(new URL('http://[::ffff:127.0.0.1]/').hostname).toBe('[::ffff:7f00:1]');
    for (const ip of [
      '::127.0.0.1', // IPv4-compatible
      '::7f00:1',
      '::ffff:7f00:1', // IPv4-mapped, hex
      '::ffff:a9fe:a9fe', // mapped 169.254.169.254
      '0:0:0:0:0:ffff:192.168.1.1',
      '::ffff:0:10.1.2.3', // IPv4-translated
      '64:ff9b::a9fe:a9fe', // NAT64 of the metadata address
      '64:ff9b:1::a00:1', // local-use NAT64
      '2002:a00:1::1', // 6to4 of 10.0.0.1
      '2002:c0a8:101::', // 6to4 of 192.168.1.1
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
      'fec0::1', // site-local
      '168.63.129.16', // Azure platform endpoint
      'fd00:ec2::254', // AWS IMDS over IPv6 (ULA)
    ]) {
      expect(isPrivateAddress(privateList, ip), ip).toBe(true);
    }
    for (const ip of ['2002:808:808::1', '::ffff:1.1.1.1', '2a00:1450:4007:80e::200e']) expect(isPrivateAddress(privateList, ip), ip).toBe(false);
    expect(embeddedIPv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIPv4('2002:c0a8:101::')).toBe('192.168.1.1');
    expect(embeddedIPv4('2606:4700::1111')).toBeUndefined();
    for (const host of ['[::127.0.0.1]', '[::ffff:7f00:1]', '[64:ff9b::7f00:1]']) expect(isPrivateHost(privateList, new URL(`http://${host}/`).hostname), host).toBe(true);
  });

  it('tells a loopback-only listening address from one the network reaches', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackListen(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.20', '10.0.0.5', 'fe80::1', '::ffff:10.0.0.1']) expect(isLoopbackListen(host), host).toBe(false);
  });
});

describe('WebhookSender (real loopback receiver)', () => {
  let receiver: Receiver;
  let hang: Receiver;
  beforeAll(async () => {
    receiver = await new Receiver((n) => (n === 0 ? 302 : 204)).listen();
    hang = await new Receiver(() => new Promise<number>(() => {})).listen();
  });
  afterAll(async () => {
    await receiver.close();
    await hang.close();
  });

  it('counts a redirect as a failure and does not follow it', async () => {
    const sender = new WebhookSender({ timeoutMs: 5000, publicOnly: false, privateList, userAgent: 'test' });
    const result = await sender.send(message(receiver.url), new AbortController().signal);
    expect(result).toMatchObject({ statusCode: 302, aborted: false });
    expect(result.error).toMatch(/^HTTP 302/);
    expect((await sender.send(message(receiver.url), new AbortController().signal)).statusCode).toBe(204);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[0]!.headers['content-type']).toBe('application/json');
    sender.close();
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const sender = new WebhookSender({ timeoutMs: 300, publicOnly: false, privateList, userAgent: 'test' });
    const result = await sender.send(message(hang.url), new AbortController().signal);
    expect(result).toMatchObject({ statusCode: null, error: 'Timed out after 0.3 s', aborted: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    sender.close();
  });

  it('is aborted (not a real attempt) when the worker stops', async () => {
    const sender = new WebhookSender({ timeoutMs: 10_000, publicOnly: false, privateList, userAgent: 'test' });
    const controller = new AbortController();
    const pending = sender.send(message(hang.url), controller.signal);
    await hang.waitFor((r) => r.requests.length >= 2, 5000, 'the request to arrive');
    controller.abort();
    expect(await pending).toMatchObject({ statusCode: null, aborted: true });
    sender.close();
  });

  it('in public-only mode refuses a loopback IP without connecting', async () => {
    const sender = new WebhookSender({ timeoutMs: 5000, publicOnly: true, privateList, userAgent: 'test' });
    const before = receiver.requests.length;
    const result = await sender.send(message(receiver.url), new AbortController().signal);
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/private or loopback/);
    expect(receiver.requests.length).toBe(before);
    sender.close();
  });

  it('in public-only mode refuses a host name that resolves to a private address, at connect time', async () => {
    // A name no resolver knows, resolved to 127.0.0.1 by the sender's own resolver, so that this
    // runs the same on every machine (no /etc/hosts entry, no `localhost` that may be ::1 only).
    // send() checks only IP literals before connecting: the refusal must come from the lookup
    // hook at connect time (its message says so); the same sender not in public-only mode
    // reaches the receiver through that name.
    const name = 'receiver.waymark.test';
    const asked: string[] = [];
    const resolve: Resolver = (hostname, _options, callback) => {
      asked.push(hostname);
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
    };
    const url = receiver.url.replace('127.0.0.1', name);
    const open = new WebhookSender({ timeoutMs: 5000, publicOnly: false, privateList, userAgent: 'test', resolve });
    const before = receiver.requests.length;
    expect((await open.send(message(url), new AbortController().signal)).statusCode).toBe(204);
    expect(receiver.requests.length).toBe(before + 1);
    expect(asked).toEqual([name]);
    open.close();

    const sender = new WebhookSender({ timeoutMs: 5000, publicOnly: true, privateList, userAgent: 'test', resolve });
    const result = await sender.send(message(url), new AbortController().signal);
    expect(result.statusCode).toBeNull();
    expect(result.error).toBe(`Refused: ${name} resolves to a private address (127.0.0.1)`);
    expect(asked).toEqual([name, name]);
    expect(receiver.requests.length).toBe(before + 1);
    sender.close();
  });

});
