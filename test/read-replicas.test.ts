import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { Replicas, replicaFailureIn } from '../db/replicas';

// D-23: which replica a call reads, from the probes' answers and the calls' failures. The servers are
// stand-ins whose control client answers the probes' questions (the primary's WAL position; whether a
// replica is a standby that has replayed it). test/replicas.test.ts runs the same against a real standby.

type Answer = () => Promise<unknown[]>;

/** A handle whose control client answers every statement with `answer()`. */
function server(answer: Answer): DatabaseHandle & { answer: Answer; closed: boolean } {
  const handle = {
    answer,
    closed: false,
    db: {} as DatabaseHandle['db'],
    control: { execute: () => handle.answer() } as unknown as DatabaseHandle['control'],
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

function replicasOf(primary: DatabaseHandle, handles: DatabaseHandle[]) {
  const events: string[] = [];
  // The probes run only when a test calls check() (start() is not called).
  const replicas = new Replicas(primary, handles, {
    maxLagMs: 5_000,
    checkMs: 1_000,
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
