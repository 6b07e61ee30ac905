/** Server-sent events framing (text/event-stream), kept free of browser APIs for unit tests. */

/** Splits an event-stream chunk buffer into complete events; returns the unparsed rest. */
export function parseEventStream(buffer: string, emit: (type: string, data: string) => void): string {
  const blocks = buffer.replace(/\r\n/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event:')) type = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) emit(type, data.join('\n'));
  }
  return rest;
}
