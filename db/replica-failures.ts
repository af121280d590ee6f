/**
 * What a failed call on a replica says about it (D-23). Reads are idempotent, so a call that failed for
 * the replica's sake runs once more on the primary:
 * - `lost`: the replica could not be reached or dropped the connection (refused, reset, shut down,
 *   starting up, out of connection slots); it also leaves rotation until a check finds it well again;
 * - `conflict`: a hot standby cancelled the statement because replaying the primary's changes (a
 *   VACUUM after the nightly build) needed what it read; the replica itself is fine.
 * Anything else (a timeout, a cancel by the request's own deadline, a full pool, a bad query) is the
 * call's answer wherever it ran: the primary would do no better.
 */
export type ReplicaFailure = 'lost' | 'conflict';

/** Error codes of node's sockets and of postgres.js for a connection that failed or went away. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/**
 * SQLSTATEs of a server that is going or not there yet: admin_shutdown, crash_shutdown,
 * cannot_connect_now, too_many_connections (and the whole connection_exception class, 08).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** serialization_failure and deadlock_detected: how a hot standby reports a recovery conflict. */
const CONFLICT_STATES = new Set(['40001', '40P01']);

/** The replica failure anywhere in an error's cause chain (drizzle and tRPC wrap what the driver threw). */
export function replicaFailureIn(error: unknown): ReplicaFailure | undefined {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 6; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (CONNECTION_CODES.has(code) || UNAVAILABLE_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return 'lost';
      if (CONFLICT_STATES.has(code)) return 'conflict';
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
