import { describe, expect, it } from 'vitest';
import type { ApiKeyState } from '../db/queries/apiKeys';
import { KeyDirectory } from '../server/key-directory';

// The key directory (server/key-directory.ts): one shared load, bounded, so no stuck statement holds the
// key check of every call (D-20).
const state: ApiKeyState = {
  keyHash: 'h',
  keyId: 1,
  partnerId: 1,
  revokedAt: null,
  expiresAt: null,
  partnerActive: true,
};

describe('key directory', () => {
  it('gives up a load that never settles, and the next call loads afresh', async () => {
    let calls = 0;
    const directory = new KeyDirectory(
      () => (++calls === 1 ? new Promise<ApiKeyState[]>(() => {}) : Promise.resolve([state])),
      { minIntervalMs: 0, loadTimeoutMs: 50 },
    );
    await expect(directory.known('h')).rejects.toThrow(/slower than 50 ms/);
    expect(await directory.known('h')).toEqual(state);
    expect(calls).toBe(2);
  });

  it('shares one load between concurrent calls', async () => {
    let calls = 0;
    const directory = new KeyDirectory(async () => {
      calls += 1;
      return [state];
    });
    await Promise.all(Array.from({ length: 50 }, () => directory.known('h')));
    expect(calls).toBe(1);
  });
});
