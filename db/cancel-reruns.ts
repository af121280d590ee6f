/**
 * A cancel by backend pid can reach the wrong statement (db/workarounds/postgres-js-cancel.ts): PostgreSQL
 * cancels whatever that backend runs when the cancel arrives, and by then the gone request's statement may
 * have finished and the backend started another request's, of the very same text under uniform load.
 * Sending the cancel on the control client and keeping statements from queueing behind each other
 * (db/pool-gate.ts) narrow that window but do not close it: statements of a few milliseconds with their
 * callers leaving at random still lose one in a few hundred to another's cancel. The API only reads, so a
 * statement cancelled "due to user request" while its own request is still live is run again, up to
 * RERUNS_AFTER_FOREIGN_CANCEL times; a statement whose own signal aborted is not.
 */
export const RERUNS_AFTER_FOREIGN_CANCEL = 2;

type Then = (onFulfilled?: (value: unknown) => unknown, onRejected?: (error: unknown) => unknown) => unknown;

/**
 * `query` (a postgres.js pending query) that, rejected by a cancel meant for another statement, settles as
 * `rerun()` does instead, in the same form (drizzle asked for `.values()` or rows).
 */
export function rerunAfterForeignCancel<Query extends object>(
  query: Query,
  signal: AbortSignal | undefined,
  rerun: () => Query,
): Query {
  const then = (query as unknown as { then: Then }).then.bind(query);
  const settled: Then = (onFulfilled, onRejected) =>
    then(onFulfilled, (error) => {
      if (cancelledByUser(error) && !signal?.aborted) {
        const again = rerun() as Query & { isRaw?: unknown; then: Then };
        again.isRaw = (query as { isRaw?: unknown }).isRaw;
        return again.then(onFulfilled, onRejected);
      }
      if (onRejected) return onRejected(error);
      throw error;
    });
  Object.defineProperty(query, 'then', { value: settled, configurable: true });
  return query;
}

/** PostgreSQL's query_canceled by pg_cancel_backend (a statement timeout has the same code, another text). */
function cancelledByUser(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '57014' && typeof message === 'string' && message.includes('user request');
}
