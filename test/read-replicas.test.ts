import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { type ProbeClock, Replicas, replicaFailureIn } from '../db/replicas';

// D-23: which replica a call reads, from the probes' answers and the calls' failures. The servers are
// stand-ins whose control client answers the probes' questions (the primary's WAL position; whether a
// replica is a standby that has replayed it). test/replicas.test.ts runs the same against a real standby.

type Answer = (query: SQL) => Promise<unknown[]>;

/** A handle whose control client answers every statement with `answer(statement)`. */
function server(answer: Answer): DatabaseHandle & { answer: Answer; closed: boolean } {
  const handle = {
    answer,
    closed: false,
    db: {} as DatabaseHandle['db'],
    control: { execute: (query: SQL) => handle.answer(query) } as unknown as DatabaseHandle['control'],
    driver: 'postgres' as const,
    migrate: async () => {},
    rows: async () => [],
    close: async () => {
      handle.closed = true;
    },
  };
  return handle;
}

const primaryAt: Answer = async () => [{ position: '0/100' }];
const caughtUp: Answer = async () => [{ standby: true, caught_up: true }];
const behind: Answer = async () => [{ standby: true, caught_up: false }];
const promoted: Answer = async () => [{ standby: false, caught_up: null }];
const down: Answer = async () => {
  throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
};

const opened: Replicas[] = [];
afterEach(async () => {
  for (const replicas of opened.splice(0)) await replicas.close();
});

/** A clock that moves only when the test says: `advance(ms)` ends the probes' waits that have come due. */
function testClock(): ProbeClock & { advance(ms: number): void } {
  let now = 0;
  let waits: { at: number; done: () => void }[] = [];
  return {
    now: () => now,
    elapsed: (ms) => new Promise((done) => waits.push({ at: now + ms, done })),
    advance(ms) {
      now += ms;
      for (const wait of waits) if (wait.at <= now) wait.done();
      waits = waits.filter((wait) => wait.at > now);
    },
  };
}

/** Resolves once the probe's pending statements and their answers have run (a macrotask later). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** An answer that comes only when the test gives it. */
function deferred(rows: unknown[]) {
  let give = () => {};
  const answer: Answer = () =>
    new Promise((resolve) => {
      give = () => resolve(rows);
    });
  return { answer, give: () => give() };
}

/** Lets `ms` pass on the test's clock in the probe under way (ending the waits due by then), then answers. */
async function answerAfter(clock: ReturnType<typeof testClock>, ms: number, late: ReturnType<typeof deferred>) {
  await settled();
  clock.advance(ms);
  await settled();
  late.give();
}

const stalled: Answer = () => new Promise(() => {});

/** A WAL position as a number, to compare. */
const lsn = (position: string) => {
  const [high = '0', low = '0'] = position.split('/');
  return Number.parseInt(high, 16) * 2 ** 32 + Number.parseInt(low, 16);
};

function replicasOf(primary: DatabaseHandle, handles: DatabaseHandle[], clock?: ProbeClock) {
  const events: string[] = [];
  // The probes run only when a test calls check() or start().
  const replicas = new Replicas(primary, handles, {
    maxLagMs: 5_000,
    checkMs: 1_000,
    connectTimeoutMs: 3_000,
    ...(clock ? { clock } : {}),
    onChange: (replica, usable, reason) => events.push(usable ? `${replica} in` : `${replica} out: ${reason}`),
  });
  opened.push(replicas);
  return { replicas, events };
}

describe('the replicas a call may read (D-23)', () => {
  it('none before a probe has found it well', async () => {
    const { replicas } = replicasOf(server(primaryAt), [server(caughtUp)]);
    expect(replicas.pick()).toBeUndefined();
    await replicas.check();
    expect(replicas.pick()?.index).toBe(0);
  });

  it('the usable ones in turn', async () => {
    const { replicas } = replicasOf(server(primaryAt), [server(caughtUp), server(caughtUp)]);
    await replicas.check();
    const picked = [1, 2, 3, 4].map(() => replicas.pick()?.index);
    expect(new Set(picked)).toEqual(new Set([0, 1]));
    expect(picked[0]).not.toBe(picked[1]);
    expect(picked[0]).toBe(picked[2]);
  });

  it('not one a probe cannot reach, finds behind or finds no standby, until a probe finds it well again', async () => {
    const failing = server(caughtUp);
    const { replicas, events } = replicasOf(server(primaryAt), [failing, server(caughtUp)]);
    await replicas.check();
    failing.answer = down;
    await replicas.check();
    expect(replicas.usable()).toBe(1);
    expect([1, 2, 3].map(() => replicas.pick()?.index)).toEqual([1, 1, 1]);
    for (const answer of [behind, promoted]) {
      failing.answer = answer;
      await replicas.check();
      expect(replicas.usable()).toBe(1);
    }
    failing.answer = caughtUp;
    await replicas.check();
    expect(replicas.usable()).toBe(2);
    expect(events).toEqual(['0 in', '1 in', '0 out: unreachable', '0 in']);
  });

  it('one that answers within the interval, however late, stays; one that has not answered by its end is skipped by that probe', async () => {
    const clock = testClock();
    const replica = server(caughtUp);
    const { replicas, events } = replicasOf(server(primaryAt), [replica], clock);
    await replicas.check();
    const late = deferred([{ standby: true, caught_up: true }]);
    replica.answer = late.answer;
    const answered = replicas.check();
    await answerAfter(clock, 999, late);
    await answered;
    expect(replicas.usable()).toBe(1);
    // It stops answering: the next probe skips it once its interval is over, within two intervals of the stall.
    replica.answer = stalled;
    const unanswered = replicas.check();
    await settled();
    clock.advance(999);
    await settled();
    expect(replicas.usable()).toBe(1);
    clock.advance(1);
    await unanswered;
    expect(replicas.pick()).toBeUndefined();
    expect(events).toEqual(['0 in', '0 out: unreachable']);
  });

  it('the first probe, which opens the connections, waits for an answer as long as a connection may take to open', async () => {
    const clock = testClock();
    const late = deferred([{ standby: true, caught_up: true }]);
    const { replicas, events } = replicasOf(server(primaryAt), [server(late.answer)], clock);
    const started = replicas.start();
    await answerAfter(clock, 2_999, late);
    await started;
    expect(events).toEqual(['0 in']);
  });

  it('one that has not replayed what the primary had written the lag bound ago is skipped at the next probe', async () => {
    const clock = testClock();
    let written = '0/100';
    let replayed = '0/100';
    const primary = server(async () => [{ position: written }]);
    // The stand-in compares its replay position with the one the probe asks about, as pg_lsn's >= would.
    const replica = server(async (query) => {
      const asked = new PgDialect().sqlToQuery(query).params.find((param) => typeof param === 'string') as string;
      return [{ standby: true, caught_up: lsn(replayed) >= lsn(asked) }];
    });
    const { replicas, events } = replicasOf(primary, [replica], clock);
    await replicas.check();
    // The primary moves on; the replica replays nothing more.
    written = '0/200';
    for (let second = 1; second <= 5; second++) {
      clock.advance(1_000);
      await replicas.check();
    }
    // The move is 4 s old at the last probe: within the 5 s bound.
    expect(replicas.usable()).toBe(1);
    clock.advance(1_000);
    await replicas.check();
    expect(events).toEqual(['0 in', '0 out: behind']);
    replayed = '0/200';
    clock.advance(1_000);
    await replicas.check();
    expect(events).toEqual(['0 in', '0 out: behind', '0 in']);
  });

  it('none while the primary has never told its position (nothing to judge the lag against)', async () => {
    const { replicas } = replicasOf(server(down), [server(caughtUp)]);
    await replicas.check();
    expect(replicas.pick()).toBeUndefined();
  });

  it('not one a call lost, at once, until the next good probe', async () => {
    const { replicas, events } = replicasOf(server(primaryAt), [server(caughtUp)]);
    await replicas.check();
    const replica = replicas.pick();
    if (!replica) throw new Error('no usable replica');
    replicas.failed(replica);
    expect(replicas.pick()).toBeUndefined();
    await replicas.check();
    expect(replicas.pick()?.index).toBe(0);
    expect(events).toEqual(['0 in', '0 out: connection failed', '0 in']);
  });

  it("closes every replica's clients when closed", async () => {
    const handles = [server(caughtUp), server(caughtUp)];
    const { replicas } = replicasOf(server(primaryAt), handles);
    await replicas.check();
    await replicas.close();
    expect(handles.map((handle) => handle.closed)).toEqual([true, true]);
    expect(replicas.pick()).toBeUndefined();
  });
});

describe('a failure on a replica (D-23)', () => {
  const wrapped = (code: string) => ({ message: 'Failed query', cause: Object.assign(new Error('x'), { code }) });

  it.each(['ECONNREFUSED', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '08006', '57P01', '57P03', '53300'])(
    '%s: the replica is lost; the call runs again on the primary',
    (code) => expect(replicaFailureIn(wrapped(code))).toBe('lost'),
  );

  it.each(['40001', '40P01'])('%s: a recovery conflict; the call runs again on the primary', (code) =>
    expect(replicaFailureIn(wrapped(code))).toBe('conflict'),
  );

  it.each(['57014', '55P03', '42P01', '23505'])('%s: the call answers as it would on the primary', (code) =>
    expect(replicaFailureIn(wrapped(code))).toBeUndefined(),
  );
});
