import { describe, expect, it } from 'vitest';
import type { ApiKeyState } from '../db/queries/apiKeys';
import { RefreshingCache } from '../server/trpc/services';

// The caches of keys and brands (server/trpc/services.ts): entries at most 1 s old, refreshed ahead of
// that bound; one shared load, bounded, so no stuck statement holds the key check of every call (D-20).
const state: ApiKeyState = {
  keyHash: 'h',
  keyId: 1,
  displayPrefix: 'pk_live_h…',
  partnerId: 1,
  revokedAt: null,
  expiresAt: null,
  partnerActive: true,
};

const held = new Map([['h', state]]);

describe('refreshing cache', () => {
  it('gives up a load that never settles, and the next call loads afresh', async () => {
    let calls = 0;
    const cache = new RefreshingCache(
      () => (++calls === 1 ? new Promise<Map<string, ApiKeyState>>(() => {}) : Promise.resolve(held)),
      { minIntervalMs: 0, loadTimeoutMs: 50 },
    );
    await expect(cache.get('h')).rejects.toThrow(/slower than 50 ms/);
    expect(await cache.get('h')).toEqual(state);
    expect(calls).toBe(2);
  });

  it('shares one load between concurrent calls', async () => {
    let calls = 0;
    const cache = new RefreshingCache(async () => {
      calls += 1;
      return held;
    });
    await Promise.all(Array.from({ length: 50 }, () => cache.get('h')));
    expect(calls).toBe(1);
  });

  it('answers from entries younger than the bound, refreshing them in the background from half of it', async () => {
    let clock = 0;
    const loads: ((entries: Map<string, ApiKeyState>) => void)[] = [];
    const cache = new RefreshingCache(() => new Promise<Map<string, ApiKeyState>>((resolve) => loads.push(resolve)), {
      minIntervalMs: 0,
      clock: () => clock,
    });
    const first = cache.get('h');
    loads[0]?.(held);
    expect(await first).toEqual(state);

    clock = 499; // younger than half the bound: no load
    expect(await cache.get('h')).toEqual(state);
    expect(loads).toHaveLength(1);

    clock = 500; // half the bound: answered at once from what is held, a load starts behind it
    expect(await cache.get('h')).toEqual(state);
    expect(loads).toHaveLength(2);
    clock = 1_000; // still within the bound while that load runs: no second load, no wait
    expect(await cache.get('h')).toEqual(state);
    expect(loads).toHaveLength(2);

    clock = 1_001; // past the bound: the call waits for the load that is fresh enough
    let answered = false;
    const waiting = cache.get('h').then((entry) => {
      answered = true;
      return entry;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answered).toBe(false);
    loads[1]?.(new Map());
    expect(await waiting).toBeUndefined(); // the fresh load no longer holds it
  });
});
