import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, parseSettings } from './settings.ts';

describe('desktop settings', () => {
  it('defaults to loopback on 8787', () => {
    expect(parseSettings(null)).toEqual({ settings: DEFAULT_SETTINGS, problems: [] });
  });
  it('reads host, port and scan base', () => {
    expect(parseSettings('{"host":"0.0.0.0","port":9000,"scanBase":"https://w.example.com","nfcNode":"/usr/bin/node"}').settings).toEqual({
      host: '0.0.0.0',
      port: 9000,
      scanBase: 'https://w.example.com',
      nfcNode: '/usr/bin/node',
    });
  });
  it('reports bad values and keeps the defaults for them', () => {
    const r = parseSettings('{"host":"evil host","port":70000,"scanBase":"ftp://x","nfcNode":"node"}');
    expect(r.settings).toEqual(DEFAULT_SETTINGS);
    expect(r.problems).toHaveLength(4);
    expect(parseSettings('[1]').problems).toEqual(['settings.json must hold an object']);
    expect(parseSettings('{').problems[0]).toMatch(/not valid JSON/);
  });
});
