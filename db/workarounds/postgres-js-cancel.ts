import type postgres from 'postgres';

/**
 * Defect: postgres.js's own `query.cancel()` wedged the pool past recovery when the server was unreachable:
 * for a running statement it opens a side connection that then waits out the outage, and for a statement a
 * connecting socket already held, its removal from the queue left the pool stuck (test/faults.test.ts
 * "down" hung every later call until a restart). No upstream issue is known to us.
 *
 * Workaround: a running statement is cancelled by its backend's pid with `pg_cancel_backend`, sent on the
 * handle's separate small client (db/client.ts), never on the request pool, and only while that backend
 * still runs this statement's text. A statement not yet running is left to run, bounded by the statement
 * timeout; its request has already answered.
 *
 * Remove when: a postgres.js release cancels through an unreachable server without wedging the pool
 * (test/faults.test.ts "down" passes with `query.cancel()` in place of this).
 */
export const writtenFor = { dependency: 'postgres', version: '3.4.9' } as const;

type Sql = ReturnType<typeof postgres>;

/**
 * Cancels `query` (a postgres.js pending query of `text`) if it is running now, and says whether it was;
 * never throws.
 */
export function cancelRunning(control: Sql, query: object, text: string): boolean {
  const { state, active } = query as { state?: { pid?: number } | null; active?: boolean };
  if (!active || !state?.pid) return false;
  control
    .unsafe(`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query = $2`, [
      state.pid,
      text,
    ])
    .then(
      () => undefined,
      () => undefined,
    );
  return true;
}
