// EV2 authentication and secure messaging against NXP's worked examples (AN12196 §5.3, §5.4,
// §6.6, and the ChangeKey CRC32 of §6.16), with a scripted card: each APDU sent is compared
// byte for byte with the note's, and the card's answers are the note's.
import { describe, expect, it } from 'vitest';
import { crc32nk, type Ev2Session, Ntag424Io } from './ntag424-session.ts';
import type { Transmit } from './program.ts';

const h = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** A card that expects exactly these APDUs, in order, and answers with these replies. */
function scripted(steps: Array<[string, string]>): { tx: Transmit; left: () => number } {
  const queue = [...steps];
  const tx: Transmit = async (apdu) => {
    const step = queue.shift();
    if (!step) throw new Error(`unexpected APDU ${apdu.toString('hex')}`);
    expect(apdu.toString('hex').toUpperCase()).toBe(step[0].replace(/\s+/g, '').toUpperCase());
    return h(step[1]);
  };
  return { tx, left: () => queue.length };
}

describe('NTAG 424 DNA secure messaging (AN12196 examples)', () => {
  it('AuthenticateEV2First with key 0 (all zero) derives the note’s TI and session keys (§6.6)', async () => {
    const card = scripted([
      ['9071000002000000', 'A04C124213C186F22399D33AC2A30215 91AF'],
      ['90AF000020 35C3E05A752E0144BAC0DE51C1F22C56B34408A23D8AEA266CAB947EA8E0118D 00', '3FA64DB5446D1F34CD6EA311167F5E4985B89690C04A05F17FA7AB2F08120663 9100'],
    ]);
    const io = new Ntag424Io(card.tx, { apdus: 0 });
    const s = await io.authenticate(0, Buffer.alloc(16), h('13C5DB8A5930439FC3DEF9A4C675360F'));
    expect(s).toEqual({ keyNo: 0, ti: h('9D00C4DF'), enc: h('1309C877509E5A215007FF0ED19CA564'), mac: h('4C6626F5E72EA694202139295C7A7FC7'), ctr: 0 });
    expect(io.counter.apdus).toBe(2);
  });

  it('a refused key is null, not an exception (91 AE on the second frame)', async () => {
    const card = scripted([
      ['9071000002000000', 'A04C124213C186F22399D33AC2A30215 91AF'],
      ['90AF000020 35C3E05A752E0144BAC0DE51C1F22C56B34408A23D8AEA266CAB947EA8E0118D 00', '91AE'],
    ]);
    expect(await new Ntag424Io(card.tx, { apdus: 0 }).authenticate(0, Buffer.alloc(16), h('13C5DB8A5930439FC3DEF9A4C675360F'))).toBeNull();
  });

  it('GetFileSettings in MAC mode: the command MAC and the response MAC (§5.3)', async () => {
    const card = scripted([['90F5000009 02 6597A457C8CD442C 00', '0040EEEE000100D1FE001F00004400004400002000006A0000 2A474282E7A47986 9100']]);
    const s: Ev2Session = { keyNo: 0, enc: Buffer.alloc(16), mac: h('8248134A386E86EB7FAF54A52E536CB6'), ti: h('7A21085E'), ctr: 0 };
    const r = await new Ntag424Io(card.tx, { apdus: 0 }).secure(s, 0xf5, h('02'), Buffer.alloc(0), { full: false });
    expect(r.data.toString('hex').toUpperCase()).toBe('0040EEEE000100D1FE001F00004400004400002000006A0000');
    expect(s.ctr).toBe(1);
  });

  it('a FULL-mode command: IV, padding, encryption and MAC of WriteData (§5.4)', async () => {
    const plain = h(`0051D1014D550463686F6F73652E75726C2E636F6D2F6E7461673432343F653D3030303030303030303030303030303030303030
      30303030303030303030303026633D30303030303030303030303030303030${'00'.repeat(45)}`);
    expect(plain.length).toBe(128);
    const card = scripted([
      [
        `908D00009F 02000000800000 421C73A27D827658AF481FDFF20A5025B559D0E3AA21E58D347F343CFFC768BFE596C706BC00F2176781D4B0242642A0FF5A42C4
         61AAF894D9A1284B8C76BCFA658ACD40555D362E08DB15CF421B51283F9064BCBE20E96CAE545B407C9D651A3315B27373772E5DA2367D2064AE054AF996C6F1
         F669170FA88CE8C4E3A4A7BBBEF0FD971FF532C3A802AF745660F2B4D1D9A8499661EBF3 00`,
        'FC222E5F7A542452 9100',
      ],
    ]);
    const s: Ev2Session = { keyNo: 0, enc: h('1309C877509E5A215007FF0ED19CA564'), mac: h('4C6626F5E72EA694202139295C7A7FC7'), ti: h('9D00C4DF'), ctr: 0 };
    const r = await new Ntag424Io(card.tx, { apdus: 0 }).secure(s, 0x8d, h('02000000800000'), plain, { full: true });
    expect(r).toEqual({ status: 0, data: Buffer.alloc(0) });
    expect(card.left()).toBe(0);
  });

  it('ChangeKey’s CRC32 of the new key (§6.16: F3847D62… → 789DFADC)', () => {
    expect(crc32nk(h('F3847D627727ED3BC9C4CC050489B966')).toString('hex').toUpperCase()).toBe('789DFADC');
  });
});
