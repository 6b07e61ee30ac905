import { describe, expect, it } from 'vitest';
import { parseEventStream } from './sse.ts';

describe('parseEventStream', () => {
  it('emits complete events, skips comments, keeps the unfinished rest', () => {
    const got: Array<[string, string]> = [];
    const rest = parseEventStream(': ping\n\nevent: reader\ndata: {"a":1}\n\nevent: session\ndata: nu', (t, d) => got.push([t, d]));
    expect(got).toEqual([['reader', '{"a":1}']]);
    expect(rest).toBe('event: session\ndata: nu');
    parseEventStream(`${rest}ll\n\n`, (t, d) => got.push([t, d]));
    expect(got[1]).toEqual(['session', 'null']);
  });

  it('handles CRLF line ends and multi-line data', () => {
    const got: Array<[string, string]> = [];
    parseEventStream('event: tag.refused\r\ndata: {"x":\r\ndata: 2}\r\n\r\n', (t, d) => got.push([t, d]));
    expect(got).toEqual([['tag.refused', '{"x":\n2}']]);
  });
});
