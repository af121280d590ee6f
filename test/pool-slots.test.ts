import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PoolBusyError, PoolSlots } from '../db/pool-slots';

// D-21: the request pool's slots, one per connection, taken by a call for its whole database work. On a
// fake clock: the rules are about order and bounds, not speed (test/pool-isolation.test.ts runs them on
// PostgreSQL).
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Work that settles when `finish` is called. */
function pending() {
  let finish = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { done, finish };
}

describe('the pool slots (D-21)', () => {
  it('let as many calls work at once as the pool has connections; the next one waits for a slot', async () => {
    const slots = new PoolSlots(2, 1_000, 60_000);
    const [a, b] = [pending(), pending()];
    const first = slots.run(() => a.done);
    void slots.run(() => b.done);
    const third = slots.run(async () => 'third');
    expect(slots.stats()).toEqual({ size: 2, inUse: 2, waiting: 1 });
    a.finish();
    await first;
    await expect(third).resolves.toBe('third');
    expect(slots.stats()).toEqual({ size: 2, inUse: 1, waiting: 0 });
  });

  it('fail a call that gets no slot within the wait with PoolBusyError (1 s Retry-After), and forget it', async () => {
    const slots = new PoolSlots(1, 300, 60_000);
    const held = pending();
    void slots.run(() => held.done);
    const refused = slots.run(async () => 'never').catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(300);
    const error = await refused;
    expect(error).toBeInstanceOf(PoolBusyError);
    expect((error as PoolBusyError).retryAfterSeconds).toBe(1);
    expect(slots.stats()).toEqual({ size: 1, inUse: 1, waiting: 0 });
  });

  it('give a slot back when the work fails', async () => {
    const slots = new PoolSlots(1, 300, 60_000);
    await expect(
      slots.run(async () => {
        throw new Error('statement failed');
      }),
    ).rejects.toThrow('statement failed');
    expect(slots.stats()).toEqual({ size: 1, inUse: 0, waiting: 0 });
  });

  it('give a slot back after the hold bound even if the work never settles (a connection the network left)', async () => {
    const slots = new PoolSlots(1, 300, 5_000);
    void slots.run(() => new Promise<never>(() => {}));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(slots.stats()).toEqual({ size: 1, inUse: 0, waiting: 0 });
    await expect(slots.run(async () => 'served')).resolves.toBe('served');
  });
});
