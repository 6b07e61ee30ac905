/**
 * LISTEN on PostgreSQL: a connection of its own (a pooled one is handed to other queries), kept
 * open and opened again after a loss. Notifications are a fast path only: none is delivered while
 * the connection is down, so `gap` tells the caller whenever some may have been missed (the
 * connection was lost, or has just been opened) and it must ask the database instead.
 */
import type pg from 'pg';
import type { PostgresStore } from './postgresStore.ts';

export interface ListenHandlers {
  notify(payload: string): void;
  gap(): void;
  error?(err: unknown): void;
}

export interface Listening {
  close(): Promise<void>;
}

export function listenPostgres(store: PostgresStore, channel: string, handlers: ListenHandlers, retryMs = 1000): Listening {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let connecting: Promise<void> = Promise.resolve();

  const retry = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      connecting = connect();
    }, retryMs);
    timer.unref();
  };
  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    handlers.gap();
    retry();
  };
  const connect = async () => {
    if (closed) return;
    // Loaded here, not at import: the scan path imports this module on SQLite too.
    const { default: driver } = await import('pg');
    const c = new driver.Client(store.pool.options);
    c.on('notification', (m) => {
      if (m.channel === channel) handlers.notify(m.payload ?? '');
    });
    c.on('error', (err) => {
      handlers.error?.(err);
      lost(c);
    });
    c.on('end', () => lost(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
    } catch (err) {
      handlers.error?.(err);
      c.end().catch(() => {});
      retry();
      return;
    }
    if (closed) {
      await c.end();
      return;
    }
    client = c;
    // Whatever was committed before LISTEN took effect was not notified here.
    handlers.gap();
  };

  connecting = connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await connecting;
      const c = client;
      client = null;
      await c?.end();
    },
  };
}
