/**
 * Defect: postgres.js counts a statement's rows on its connection and resets the count only when a
 * statement completes. After a statement that failed while sending rows (cancelled, timed out, or an error
 * in a row), the next statement on that connection resolves with that many empty slots before its own
 * rows (porsager/postgres#1119, also #1181). Met as list pages whose first items were `undefined` (a 500
 * by the output schema) right after clients dropped their connections mid-load.
 *
 * Workaround: the holes are always leading and the result's `count` is right, so a result keeps its last
 * `count` entries.
 *
 * Remove when: a postgres.js release carries the upstream fix (the statement after a failed one gets its
 * own rows without this); test/faults.test.ts "a statement that fails while sending its rows" shows it.
 */
export const writtenFor = { dependency: 'postgres', version: '3.4.9' } as const;

/** The result without the leading empty slots a previous failed statement left on the connection. */
export function withoutStaleRows(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  const { count } = value as unknown[] & { count?: unknown };
  if (typeof count !== 'number' || value.length <= count) return value;
  value.splice(0, value.length - count);
  return value;
}

type Then = (onFulfilled?: (value: unknown) => unknown, onRejected?: (error: unknown) => unknown) => unknown;

/**
 * The query (a postgres.js pending query, a lazy thenable) with every result passed through
 * withoutStaleRows. Its own `then` is wrapped, not called: calling it would start the query before drizzle
 * asks for `.values()`.
 */
export function keepOwnRows<Query extends object>(query: Query): Query {
  const then = (query as unknown as { then: Then }).then.bind(query);
  const own: Then = (onFulfilled, onRejected) =>
    then((value) => {
      const rows = withoutStaleRows(value);
      return onFulfilled ? onFulfilled(rows) : rows;
    }, onRejected);
  Object.defineProperty(query, 'then', { value: own, configurable: true });
  return query;
}
