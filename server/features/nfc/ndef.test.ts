import { describe, expect, it } from 'vitest';
import fc from '../../../test/support/fast-check.ts';
import { decodeUriMessage, encodeUriMessage, nfcTagUrl, uriIdentifierCode } from './ndef.ts';
import { bytesNeeded, classifyAtr, ndefTlv, parseCapabilityContainer, planWrite, verifyReads } from './type2.ts';

describe('NDEF URI records', () => {
  it('encodes a short https URL with identifier code 04 as one short record', () => {
    const msg = encodeUriMessage('https://wm.example/v/ABCD1234?nfc');
    const rest = Buffer.from('wm.example/v/ABCD1234?nfc');
    expect(msg.subarray(0, 5)).toEqual(Buffer.from([0xd1, 0x01, rest.length + 1, 0x55, 0x04]));
    expect(msg.subarray(5)).toEqual(rest);
  });

  it('picks the longest prefix (https://www. over https://)', () => {
    expect(uriIdentifierCode('https://www.example.com')).toBe(2);
    expect(uriIdentifierCode('http://example.com')).toBe(3);
    expect(uriIdentifierCode('HTTPS://EXAMPLE.COM/V/X')).toBe(0); // the RTD prefixes are case-sensitive
  });

  it('uses a long record above 255 payload bytes', () => {
    const url = `https://example.com/${'a'.repeat(300)}`;
    const msg = encodeUriMessage(url);
    expect(msg[0]).toBe(0xc1);
    expect(msg.readUInt32BE(2)).toBe(msg.length - 7);
    expect(decodeUriMessage(msg)).toBe(url);
  });

  it('round-trips any URI', () => {
    fc.assert(fc.property(fc.webUrl(), (url) => decodeUriMessage(encodeUriMessage(url)) === url));
  });

  it('appends ?nfc (or &nfc) to scan URLs', () => {
    expect(nfcTagUrl('https://wm.example/v/ABCD1234')).toBe('https://wm.example/v/ABCD1234?nfc');
    expect(nfcTagUrl('https://wm.example/v/ABCD1234?x=1')).toBe('https://wm.example/v/ABCD1234?x=1&nfc');
  });
});

describe('Type 2 layout', () => {
  it('reads capacity and access from the capability container', () => {
    expect(parseCapabilityContainer(Buffer.from([0xe1, 0x10, 0x12, 0x00]))).toMatchObject({ dataAreaBytes: 144, type: 'NTAG213', writeAccess: 0 });
    expect(parseCapabilityContainer(Buffer.from([0xe1, 0x10, 0x3e, 0x00])).type).toBe('NTAG215');
    expect(parseCapabilityContainer(Buffer.from([0xe1, 0x10, 0x6d, 0x0f]))).toMatchObject({ type: 'NTAG216', writeAccess: 0x0f });
  });

  it('classifies ATRs', () => {
    expect(classifyAtr(Buffer.from('3B8F8001804F0CA0000003060300030000000068', 'hex')).supported).toBe(true);
    expect(classifyAtr(Buffer.from('3B8F8001804F0CA000000306030001000000006A', 'hex'))).toMatchObject({ supported: false, kind: 'mifare_classic' });
    expect(classifyAtr(Buffer.from('3B8080010101', 'hex'))).toMatchObject({ supported: false, kind: 'iso_dep' });
  });

  it('plans length 0 first, then the body, then the real length', () => {
    const msg = encodeUriMessage('https://wm.example/v/ABCD1234?nfc');
    const tlv = ndefTlv(msg, 144);
    expect(tlv[tlv.length - 1]).toBe(0xfe);
    const plan = planWrite(tlv, Buffer.from([0xde, 0xad, 0xbe, 0xef]));
    const pages = Math.ceil(tlv.length / 4);
    expect(plan.length).toBe(pages + 1);
    expect(plan[0]!.page).toBe(4);
    expect(plan[0]!.data[1]).toBe(0);
    expect(plan.slice(1, -1).map((w) => w.page)).toEqual(Array.from({ length: pages - 1 }, (_, i) => 5 + i));
    expect(plan.at(-1)).toEqual({ page: 4, data: tlv.subarray(0, 4) });
    // Already an empty NDEF TLV on page 4: the first step is not needed.
    expect(planWrite(tlv, Buffer.from([0x03, 0x00, 0xfe, 0x00])).length).toBe(pages);
  });

  it('never shows a non-empty message at any prefix of the plan', () => {
    const msg = encodeUriMessage('https://wm.example/v/ABCD1234?nfc');
    const tlv = ndefTlv(msg, 144);
    const plan = planWrite(tlv, Buffer.from([0x03, 0x05, 0xd1, 0x01]));
    for (let k = 1; k < plan.length; k++) {
      const mem = Buffer.from([0x03, 0x05, 0xd1, 0x01]);
      for (const w of plan.slice(0, k)) if (w.page === 4) w.data.copy(mem);
      expect(mem[1]).toBe(0);
    }
  });

  it('needs one 16-byte read per 4 pages to verify', () => {
    expect(verifyReads(39)).toEqual([4, 8, 12]);
    expect(verifyReads(16)).toEqual([4]);
    expect(bytesNeeded(Buffer.alloc(300))).toBe(304);
  });
});
