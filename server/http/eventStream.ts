import type { Response } from 'express';

export interface EventStream {
  send(type: string, data: unknown): void;
  /** Runs when the client goes away (or the server ends the stream). */
  onClose(fn: () => void): void;
}

/**
 * Turns a response into a server-sent event stream: headers flushed at once, a comment every
 * 15 s so that proxies and idle timeouts keep it open. Never compressed (http/api.ts skips
 * text/event-stream): a compressor would hold events back.
 */
export function openEventStream(res: Response, pingMs = 15_000): EventStream {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  const ping = setInterval(() => res.write(': ping\n\n'), pingMs);
  res.on('close', () => clearInterval(ping));
  return {
    send: (type, data) => void res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`),
    onClose: (fn) => void res.on('close', fn),
  };
}
