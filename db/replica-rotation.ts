// The rotation rules of D-23, over what the replica checks observed: pure, so they read as rules.

/** A WAL position (an LSN) as a byte offset. */
export type WalPosition = bigint;

/** The primary's WAL position (pg_current_wal_lsn) as observed at `at` (monotonic ms). */
export type WalSample = { at: number; position: WalPosition };

/** What one check of a replica found, at `at`. */
export type ReplicaProbe =
  | { at: number; reachable: false }
  /** `replayed`: pg_last_wal_replay_lsn, null when the server has replayed nothing (or is no standby). */
  | { at: number; reachable: true; standby: boolean; replayed: WalPosition | null };

export type Verdict =
  | { inRotation: true; lagMs: number }
  | { inRotation: false; reason: 'unreachable' | 'not a standby' | 'lagging'; lagMs?: number };

/** `X/Y` (hex halves of an LSN, as PostgreSQL prints it) as a byte offset. */
export function parseWalPosition(text: string): WalPosition {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!match) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/**
 * How long a replica that has replayed up to `replayed` has been behind the primary, at `at`: since the
 * oldest primary sample it has not reached yet (0 when it has reached them all). The measure is time, not
 * bytes: a write burst (the nightly build) moves the primary by gigabytes in seconds, and a replica that
 * streams and replays it within a second is a second behind, however many bytes that is. An idle primary
 * writes nothing, so a replica that has replayed everything is 0 behind however long ago its last replayed
 * transaction was (a replay timestamp would keep growing and eject it). It is a lower bound, exact to
 * within the time between two samples: the primary may have reached a position shortly before it was seen there.
 */
export function lagMs(primary: readonly WalSample[], replayed: WalPosition, at: number): number {
  const behind = primary.find((sample) => sample.position > replayed);
  return behind ? Math.max(0, at - behind.at) : 0;
}

/**
 * A replica is in rotation when its last check reached it, it is a standby (a server out of recovery is
 * no replica of this primary: promoted, or misconfigured), and it is at most `maxLagMs` behind.
 */
export function judge(primary: readonly WalSample[], probe: ReplicaProbe, maxLagMs: number): Verdict {
  if (!probe.reachable) return { inRotation: false, reason: 'unreachable' };
  if (!probe.standby || probe.replayed === null) return { inRotation: false, reason: 'not a standby' };
  const lag = lagMs(primary, probe.replayed, probe.at);
  return lag > maxLagMs ? { inRotation: false, reason: 'lagging', lagMs: lag } : { inRotation: true, lagMs: lag };
}

/**
 * The samples still needed at `at`: those of the last `keepMs` (at least the bound), plus the newest older
 * one, so a replica stuck behind all of them is still judged at least `keepMs` behind. A position the
 * primary did not move from is one sample (the earliest time it was seen there counts).
 */
export function keepSamples(samples: readonly WalSample[], next: WalSample, keepMs: number): WalSample[] {
  const last = samples.at(-1);
  const all = last && last.position >= next.position ? [...samples] : [...samples, next];
  const cutoff = next.at - keepMs;
  let first = 0;
  while (first + 1 < all.length && (all[first + 1]?.at ?? Number.POSITIVE_INFINITY) <= cutoff) first += 1;
  return all.slice(first);
}
