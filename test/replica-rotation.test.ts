import { describe, expect, it } from 'vitest';
import { replicaFailureIn } from '../db/replica-failures';
import { judge, keepSamples, lagMs, parseWalPosition, type ReplicaProbe, type WalSample } from '../db/replica-rotation';

// D-23: which replicas serve reads, judged from the primary's WAL position and each replica's replay position.
const GB = 1n << 30n;
const MAX_LAG_MS = 5_000;
const standby = (at: number, replayed: bigint): ReplicaProbe => ({ at, reachable: true, standby: true, replayed });

/** The primary's samples of one check a second, from its positions. */
const everySecond = (...positions: bigint[]): WalSample[] =>
  positions.map((position, i) => ({ at: i * 1_000, position }));

describe('WAL positions', () => {
  it('reads PostgreSQL’s X/Y form as a byte offset', () => {
    expect(parseWalPosition('0/0')).toBe(0n);
    expect(parseWalPosition('0/3000148')).toBe(0x3000148n);
    expect(parseWalPosition('1/0')).toBe(1n << 32n);
    expect(parseWalPosition('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
  });

  it('refuses anything else', () => {
    for (const text of ['', '0', '0/', 'x/1', '1/2/3', '123456789/0']) expect(() => parseWalPosition(text)).toThrow();
  });
});

describe('lag: since the oldest primary position the replica has not replayed', () => {
  it('is 0 on an idle primary however long ago the last write was', () => {
    const idle = [{ at: 0, position: 100n }];
    expect(lagMs(idle, 100n, 3_600_000)).toBe(0);
    expect(judge(idle, standby(3_600_000, 100n), MAX_LAG_MS)).toEqual({ inRotation: true, lagMs: 0 });
  });

  it('is 0 for a replica at or past the newest sample', () => {
    const primary = everySecond(100n, 200n, 300n);
    expect(lagMs(primary, 300n, 2_500)).toBe(0);
    expect(lagMs(primary, 350n, 2_500)).toBe(0);
  });

  it('counts from when the primary was first seen past the replica', () => {
    const primary = everySecond(100n, 200n, 300n, 400n);
    expect(lagMs(primary, 150n, 3_000)).toBe(2_000);
    expect(lagMs(primary, 99n, 3_000)).toBe(3_000);
    expect(lagMs(primary, 399n, 3_000)).toBe(0);
  });

  it('does not depend on how many bytes behind: a write burst replayed within a second keeps every replica in', () => {
    // The nightly build: a gigabyte a second on the primary, each replica a gigabyte (a second) behind.
    const burst = everySecond(...Array.from({ length: 60 }, (_, i) => BigInt(i) * GB));
    for (let second = 2; second < 60; second++) {
      const seen = burst.slice(0, second + 1);
      expect(judge(seen, standby(second * 1_000, BigInt(second - 1) * GB - 1n), MAX_LAG_MS)).toEqual({
        inRotation: true,
        lagMs: 1_000,
      });
    }
  });
});

describe('rotation', () => {
  const primary = everySecond(100n, 200n, 300n, 400n, 500n, 600n, 700n, 800n);

  it('keeps a replica up to the bound behind and takes one further behind out', () => {
    expect(judge(primary, standby(7_000, 200n), MAX_LAG_MS)).toEqual({ inRotation: true, lagMs: 5_000 });
    expect(judge(primary, standby(7_000, 150n), MAX_LAG_MS)).toEqual({
      inRotation: false,
      reason: 'lagging',
      lagMs: 6_000,
    });
  });

  it('takes back a replica that has caught up, by itself', () => {
    expect(judge(primary, standby(7_000, 150n), MAX_LAG_MS).inRotation).toBe(false);
    expect(judge(primary, standby(7_500, 800n), MAX_LAG_MS)).toEqual({ inRotation: true, lagMs: 0 });
  });

  it('takes out a replica the check did not reach, and takes it back once it answers', () => {
    expect(judge(primary, { at: 7_000, reachable: false }, MAX_LAG_MS)).toEqual({
      inRotation: false,
      reason: 'unreachable',
    });
    expect(judge(primary, standby(8_000, 800n), MAX_LAG_MS).inRotation).toBe(true);
  });

  it('takes out a server that is not in recovery: no replica of this primary', () => {
    const promoted: ReplicaProbe = { at: 7_000, reachable: true, standby: false, replayed: null };
    expect(judge(primary, promoted, MAX_LAG_MS)).toEqual({ inRotation: false, reason: 'not a standby' });
    expect(judge(primary, { ...promoted, standby: true }, MAX_LAG_MS)).toEqual({
      inRotation: false,
      reason: 'not a standby',
    });
  });

  it('judges against what was seen when the primary cannot be sampled', () => {
    expect(judge([], standby(7_000, 0n), MAX_LAG_MS)).toEqual({ inRotation: true, lagMs: 0 });
  });
});

describe('the primary samples kept', () => {
  it('keep one sample per position: the earliest time the primary was seen there', () => {
    let samples: WalSample[] = [];
    for (const at of [0, 1_000, 2_000]) samples = keepSamples(samples, { at, position: 100n }, 10_000);
    expect(samples).toEqual([{ at: 0, position: 100n }]);
  });

  it('drop what is older than the window but one, so a replica stuck behind them all stays out', () => {
    let samples: WalSample[] = [];
    for (let second = 0; second <= 20; second++)
      samples = keepSamples(samples, { at: second * 1_000, position: BigInt(second + 1) * 100n }, 7_000);
    expect(samples[0]?.at).toBe(13_000);
    expect(samples.at(-1)?.at).toBe(20_000);
    expect(judge(samples, standby(20_000, 0n), MAX_LAG_MS)).toEqual({
      inRotation: false,
      reason: 'lagging',
      lagMs: 7_000,
    });
  });
});

describe('a call that failed on a replica', () => {
  const wrapped = (cause: unknown) => new Error('query failed', { cause: new Error('driver', { cause }) });
  const coded = (code: string) => Object.assign(new Error(code), { code });

  it('ran on a replica that is gone: lost (retried on the primary, the replica out)', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'CONNECTION_CLOSED',
      'CONNECT_TIMEOUT',
      '57P01',
      '57P03',
      '08006',
    ])
      expect(replicaFailureIn(wrapped(coded(code)))).toBe('lost');
  });

  it('met a recovery conflict: retried on the primary, the replica kept', () => {
    for (const code of ['40001', '40P01']) expect(replicaFailureIn(wrapped(coded(code)))).toBe('conflict');
  });

  it('failed for any other reason: that is its answer', () => {
    for (const code of ['57014', '42P01', '23505', 'INTERNAL_SERVER_ERROR'])
      expect(replicaFailureIn(wrapped(coded(code)))).toBeUndefined();
    expect(replicaFailureIn(new Error('no code'))).toBeUndefined();
    expect(replicaFailureIn(undefined)).toBeUndefined();
  });
});
