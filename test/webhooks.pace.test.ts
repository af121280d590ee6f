import { describe, expect, it } from 'vitest';
import { DeliveryPace } from '../server/webhooks/pace';

// D-28: an instance starts at most WEBHOOK_DELIVERIES_PER_SECOND attempts a second, over all endpoints. The
// clock and the wait are injected: the rule is about when attempts may start, not how long a test takes.

function paced(perSecond: number) {
  const clock = { now: 0 };
  const waits: number[] = [];
  const pace = new DeliveryPace(
    perSecond,
    () => clock.now,
    async (ms) => {
      waits.push(ms);
      clock.now += ms;
    },
  );
  return { pace, clock, waits, signal: new AbortController().signal };
}

describe('the delivery pace (D-28)', () => {
  it('lets an idle instance start a batch at once, and spaces the next ones by their size', async () => {
    const { pace, waits, signal } = paced(100);
    expect(await pace.take(8, signal)).toBe(0);
    expect(waits).toEqual([]);
    // Each take says how long it waited: the worker renews its leases after a long one.
    expect(await pace.take(8, signal)).toBe(80);
    expect(await pace.take(2, signal)).toBe(80);
    expect(waits).toEqual([80, 80]);
  });

  it('holds every endpoint to one rate: batches asked for at once queue one behind the other', async () => {
    const waits: number[] = [];
    // Three endpoints' loops ask before any wait ends: the clock does not move between them.
    const pace = new DeliveryPace(
      50,
      () => 0,
      async (ms) => {
        waits.push(ms);
      },
    );
    const signal = new AbortController().signal;
    await Promise.all([pace.take(5, signal), pace.take(5, signal), pace.take(5, signal)]);
    expect(waits).toEqual([100, 200]);
  });

  it('keeps no debt from a busy past: after a quiet while, the next batch starts at once', async () => {
    const { pace, clock, waits, signal } = paced(10);
    await pace.take(10, signal);
    clock.now += 5_000;
    await pace.take(1, signal);
    expect(waits).toEqual([]);
  });

  it('ends a wait when its signal aborts (the instance stopping)', async () => {
    const controller = new AbortController();
    // One attempt an hour: a wait the abort did not end would outlast the test.
    const pace = new DeliveryPace(1 / 3_600);
    await pace.take(1, controller.signal);
    const waiting = pace.take(1, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeGreaterThan(3_000_000);
  });
});
