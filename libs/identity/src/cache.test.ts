import { ReadThroughCache } from './cache';

describe('ReadThroughCache', () => {
  const clock = () => {
    let t = Date.parse('2026-11-22T10:00:00Z');
    return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
  };

  it('evicts expired entries when it remembers a value, so keys seen once do not stay', async () => {
    const time = clock();
    let reads = 0;
    const cache = new ReadThroughCache(async (key) => `${key}:${++reads}`, 10_000, time.now);
    for (const key of ['a', 'b', 'c']) await cache.get(key);
    time.advance(10_001);
    expect(await cache.get('d')).toBe('d:4');
    expect(cache.size).toBe(1);
  });

  it('reads an expired key again, and holds at most maxEntries', async () => {
    const time = clock();
    let reads = 0;
    const cache = new ReadThroughCache(async (key) => `${key}:${++reads}`, 10_000, time.now, 2);
    expect(await cache.get('a')).toBe('a:1');
    expect(await cache.get('a')).toBe('a:1');
    time.advance(10_001);
    expect(await cache.get('a')).toBe('a:2');
    await cache.get('b');
    await cache.get('c');
    expect(cache.size).toBe(2);
    expect(await cache.get('a')).toBe('a:5');
  });
});
