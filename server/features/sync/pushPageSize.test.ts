import { describe, expect, it } from 'vitest';
import { PushPageSize } from './pushPageSize.ts';

describe('PushPageSize', () => {
  it('starts small, doubles after quick pages up to the maximum, halves after slow ones down to the minimum', () => {
    const size = new PushPageSize(1000, { start: 100, min: 10, targetMs: 4000 });
    expect(size.current).toBe(100);
    for (let i = 0; i < 10; i++) size.took(200);
    expect(size.current).toBe(1000);
    size.took(5000);
    expect(size.current).toBe(500);
    size.took(2000); // between a quarter of the target and the target: kept
    expect(size.current).toBe(500);
    for (let i = 0; i < 20; i++) size.shrink();
    expect(size.current).toBe(10);
  });

  it('never exceeds a maximum smaller than its start', () => {
    const size = new PushPageSize(3, { start: 100 });
    expect(size.current).toBe(3);
    size.took(1);
    expect(size.current).toBe(3);
  });
});
