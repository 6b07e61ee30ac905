import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from './database.ts';
import { deferredFlush } from './deferredFlush.ts';

let dir = '';
let db: Database;
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(): Database {
  dir = mkdtempSync(join(tmpdir(), 'waymark-deferred-'));
  db = openDatabase(join(dir, 'waymark.db'));
  return db;
}

const level = (d: Database) => d.pragma('synchronous', { simple: true });

describe('deferredFlush', () => {
  it('commits at NORMAL and puts the connection back at its own level, also when the commit throws', () => {
    const d = open();
    const defer = deferredFlush(d);
    for (const own of [2, 3]) {
      d.pragma(`synchronous = ${own}`);
      expect(defer(() => level(d))).toBe(1);
      expect(level(d)).toBe(own);
      expect(defer(() => level(d))).toBe(1); // and again: each call really switches
      expect(level(d)).toBe(own);
      expect(() => defer(() => { throw new Error('boom'); })).toThrow('boom');
      expect(level(d)).toBe(own);
    }
  });

  it('leaves a weaker level, and a transaction under way, alone', () => {
    const d = open();
    const defer = deferredFlush(d);
    d.pragma('synchronous = OFF');
    expect(defer(() => level(d))).toBe(0);
    d.pragma('synchronous = FULL');
    expect(d.transaction(() => defer(() => level(d)))()).toBe(2);
    expect(level(d)).toBe(2);
  });
});
