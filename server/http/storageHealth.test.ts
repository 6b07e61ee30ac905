import { describe, expect, it } from 'vitest';
import { ManualClock } from '../platform/clock.ts';
import { isDiskFull } from './errors.ts';
import { StorageHealth } from './storageHealth.ts';

describe('disk-full errors', () => {
  it('recognises SQLite, file-system and PostgreSQL disk-full errors, also as a cause', () => {
    expect(isDiskFull(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error('could not extend file'), { code: '53100' }))).toBe(true);
    expect(isDiskFull(new Error('wrapped', { cause: Object.assign(new Error('full'), { code: 'SQLITE_FULL' }) }))).toBe(true);
    for (const other of [new Error('x'), Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }), Object.assign(new Error('x'), { code: '53200' }), null, 'SQLITE_FULL']) {
      expect(isDiskFull(other)).toBe(false);
    }
  });
});

describe('StorageHealth', () => {
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

  it('logs the first failure, then one line a minute with a count, then the total when writes work again', () => {
    const clock = new ManualClock(Date.parse('2026-11-25T12:00:00.000Z'));
    const lines: string[] = [];
    const health = new StorageHealth({ info: (m) => lines.push(`info ${m}`), error: (m, err) => lines.push(`error ${m}${err ? ' +err' : ''}`) }, clock);
    expect(health.status()).toEqual({ ok: true });
    expect(health.failed(new Error('other'), 'x')).toBe(false);
    expect(health.failed(full, 'POST /v1/nodes')).toBe(true);
    for (let i = 0; i < 30; i++) {
      clock.advance(1000);
      health.failed(full, 'POST /v1/nodes');
    }
    expect(lines).toEqual(['error storage: writes failing: the data volume is full (POST /v1/nodes); one line a minute until they work again']);
    clock.advance(30_000);
    health.failed(full, 'scan');
    expect(lines[1]).toBe('error storage: 31 more writes failed in the last 60 s: the data volume is still full');
    expect(health.status()).toEqual({ ok: false, reason: 'writes failing: the data volume is full (32 failed writes since 2026-11-25T12:00:00.000Z)' });
    health.succeeded();
    health.succeeded();
    expect(lines.slice(2)).toEqual(['info storage: writes work again after 32 failed writes (the data volume was full since 2026-11-25T12:00:00.000Z)']);
    expect(health.status()).toEqual({ ok: true });
  });

  it('wraps a logger: disk-full errors are counted, others logged as they were', () => {
    const lines: string[] = [];
    const health = new StorageHealth({ info: () => {}, error: (m) => lines.push(m) }, new ManualClock(0));
    const logger = health.wrap({ info: () => {}, error: (m) => lines.push(`passed: ${m}`) });
    logger.error('webhooks: dispatch failed', full);
    logger.error('webhooks: dispatch failed', full);
    logger.error('something else', new Error('boom'));
    expect(lines).toEqual(['storage: writes failing: the data volume is full (webhooks: dispatch failed); one line a minute until they work again', 'passed: something else']);
  });
});
