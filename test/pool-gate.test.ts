import { describe, expect, it } from 'vitest';
import { PoolBusyError, PoolGate } from '../db/pool-gate';

// D-21: the request pool's admission, on its own (no database): which statement gets a connection.
describe('the request pool gate (D-21)', () => {
  it('lets one resource hold at most half the pool', async () => {
    const gate = new PoolGate(4, 20);
    await gate.acquire('reviews');
    await gate.acquire('reviews');
    await expect(gate.acquire('reviews')).rejects.toBeInstanceOf(PoolBusyError);
    expect(gate.stats()).toMatchObject({ inUse: 2, waiting: 0 });
  });

  it('keeps a permit for every resource that holds none, when a table several resources read is locked', async () => {
    const gate = new PoolGate(10, 20);
    // Every resource has been seen; then the four that read shops pile up behind a lock on it.
    for (const lane of ['brands', 'users', 'shops', 'reviews', 'reviewStats', 'sales']) (await gate.acquire(lane))();
    const held: Array<() => void> = [];
    for (const lane of ['shops', 'reviews', 'reviewStats', 'sales'])
      for (let i = 0; i < 5; i += 1)
        held.push(
          ...(await Promise.allSettled([gate.acquire(lane)])).flatMap((r) =>
            r.status === 'fulfilled' ? [r.value] : [],
          ),
        );
    expect(held).toHaveLength(8);
    // users and brands never read shops: each still gets a connection at once.
    await expect(gate.acquire('users')).resolves.toBeTypeOf('function');
    await expect(gate.acquire('brands')).resolves.toBeTypeOf('function');
    expect(gate.stats().inUse).toBe(10);
  });

  it('gives a statement’s permit back after the hold limit, a transaction’s only when it ends', async () => {
    const gate = new PoolGate(2, 20, 30);
    await gate.acquire('reviews');
    const endTransaction = await gate.acquire(undefined, undefined, { holdLimit: false });
    expect(gate.stats().inUse).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    // The statement's permit came back (its connection is taken for dead); the transaction's did not.
    expect(gate.stats().inUse).toBe(1);
    endTransaction();
    expect(gate.stats().inUse).toBe(0);
  });
});
