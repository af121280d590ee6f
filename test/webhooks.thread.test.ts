import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../server/logger';
import { DeliveryThread } from '../server/webhooks/delivery-thread';
import { eventually } from './support/eventually';

// D-28: on PostgreSQL, delivery runs in a thread of its own (server/webhooks/delivery-thread.ts). Here with a
// fake thread module; the real one delivers in test/webhooks.instances.test.ts, from server processes.

const FAKE = new URL('./support/delivery-thread-fake.mjs', import.meta.url);

function logged() {
  const lines: { msg: string }[] = [];
  return { lines, log: createLogger('info', (line) => lines.push(JSON.parse(line) as { msg: string })) };
}

afterEach(() => {
  delete process.env.FAKE_DELIVERY_THREAD_FAILS;
});

describe('the delivery thread (D-28)', () => {
  it('starts once the thread says it listens, serves what the thread reports, and stops with it', async () => {
    const { log } = logged();
    const thread = new DeliveryThread(log, FAKE);
    await thread.start();
    // The fake reports its thread id as its lag: a report crossed from the thread.
    await eventually(
      () => thread.largestLagSeconds(),
      (lag) => lag > 0,
    );
    await thread.stop();
    await thread.stop();
  });

  it('a thread that fails is logged and started again; stop ends the new one', async () => {
    const { lines, log } = logged();
    process.env.FAKE_DELIVERY_THREAD_FAILS = '1';
    const thread = new DeliveryThread(log, FAKE);
    await thread.start();
    // The next thread starts without the failure.
    delete process.env.FAKE_DELIVERY_THREAD_FAILS;
    const first = await eventually(
      () => thread.largestLagSeconds(),
      (lag) => lag > 0,
    );
    const next = await eventually(
      () => thread.largestLagSeconds(),
      (lag) => lag !== first,
    );
    expect(next).toBeGreaterThan(first);
    expect(lines.map((line) => line.msg)).toEqual([
      'webhook delivery thread failed',
      'webhook delivery thread ended; starting it again',
    ]);
    await thread.stop();
    expect(lines).toHaveLength(2);
  });
});
