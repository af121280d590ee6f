import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { ReadReplicas } from '../db/replicas';

// D-23: how the rotation is kept from the checks' answers and the calls' failures (the rules themselves:
// test/replica-rotation.test.ts). The servers are stand-ins answering the checks' two questions.

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

const at =
  (position: string): Answer =>
  async () => [{ position }];
const standbyAt =
  (replayed: string): Answer =>
  async () => [{ standby: true, replayed }];
const down: Answer = async () => {
  throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
};

const opened: ReadReplicas[] = [];
afterEach(async () => {
  for (const replicas of opened.splice(0)) await replicas.close();
});

function replicasOf(primary: DatabaseHandle, handles: DatabaseHandle[]) {
  const events: string[] = [];
  const replicas = new ReadReplicas(primary, handles, {
    maxLagMs: 5_000,
    // Longer than any test: checks run only when a test calls check().
    checkMs: 60_000,
    events: {
      left: (replica, reason) => events.push(`${replica} left: ${reason}`),
      returned: (replica) => events.push(`${replica} in`),
    },
  });
  opened.push(replicas);
  return { replicas, events };
}

describe('the rotation', () => {
  it('serves no reads from a replica before a check has found it well', async () => {
    const { replicas } = replicasOf(server(at('0/100')), [server(standbyAt('0/100'))]);
    expect(replicas.pick()).toBeUndefined();
    await replicas.check();
    expect(replicas.pick()?.index).toBe(0);
  });

  it('takes the replicas in rotation in turn', async () => {
    const { replicas } = replicasOf(server(at('0/100')), [server(standbyAt('0/100')), server(standbyAt('0/100'))]);
    await replicas.check();
    const picked = [1, 2, 3, 4].map(() => replicas.pick()?.index);
    expect(new Set(picked)).toEqual(new Set([0, 1]));
    expect(picked[0]).not.toBe(picked[1]);
    expect(picked[0]).toBe(picked[2]);
  });

  it('takes out a replica a check cannot reach, reads the others, and takes it back once it answers', async () => {
    const failing = server(standbyAt('0/100'));
    const { replicas, events } = replicasOf(server(at('0/100')), [failing, server(standbyAt('0/100'))]);
    await replicas.check();
    failing.answer = down;
    await replicas.check();
    expect(replicas.inRotation()).toBe(1);
    expect([1, 2, 3].map(() => replicas.pick()?.index)).toEqual([1, 1, 1]);
    failing.answer = standbyAt('0/100');
    await replicas.check();
    expect(replicas.inRotation()).toBe(2);
    expect(events).toEqual(['0 in', '1 in', '0 left: unreachable', '0 in']);
  });

  it('reads the primary when no replica is in rotation', async () => {
    const { replicas } = replicasOf(server(at('0/100')), [server(down)]);
    await replicas.check();
    expect(replicas.pick()).toBeUndefined();
  });

  it('takes out at once a replica a call lost, and tells the calls waiting on it', async () => {
    const { replicas, events } = replicasOf(server(at('0/100')), [server(standbyAt('0/100'))]);
    await replicas.check();
    const replica = replicas.pick();
    if (!replica) throw new Error('no replica in rotation');
    let told = false;
    const waiting = replicas.whenUnreachable(replica);
    void waiting.then(() => {
      told = true;
    });
    replicas.lost(replica, new Error('connection reset'));
    await waiting;
    expect(told).toBe(true);
    expect(replicas.pick()).toBeUndefined();
    expect(events).toEqual(['0 in', '0 left: connection failed']);
  });

  it('closes every replica’s clients when closed', async () => {
    const handles = [server(standbyAt('0/100')), server(standbyAt('0/100'))];
    const { replicas } = replicasOf(server(at('0/100')), handles);
    await replicas.check();
    await replicas.close();
    expect(handles.map((handle) => handle.closed)).toEqual([true, true]);
    expect(replicas.pick()).toBeUndefined();
  });
});
