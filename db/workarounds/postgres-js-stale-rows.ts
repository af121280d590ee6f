import type postgres from 'postgres';

/**
 * Defect: postgres.js counts a statement's rows on its connection and resets the count only when a
 * statement completes. After a statement that failed while sending rows (a statement_timeout, an error in
 * a row), the next statement on that connection resolves with that many empty slots before its own rows
 * (porsager/postgres#1119, also #1181; fixes proposed in #1120 and #1190, unreleased). Met as list pages
 * whose first items were `undefined` (a 500) after clients dropped their connections mid-load.
 *
 * Workaround: the holes are always leading and the result's `count` is right, so a result keeps its last
 * `count` entries. Applied through postgres.js's public surface only: drizzle runs every statement through
 * `sql.unsafe()` (awaited, or `.values()` then awaited), and gets here a client whose `unsafe` answers the
 * same query with its result trimmed. Statements inside `sql.begin()` (the daily build, the migrations)
 * get postgres.js's own client and are not covered; no request runs one.
 *
 * Remove when: a postgres.js release carries the upstream fix; test/faults.test.ts "a statement that
 * fails while sending its rows" then passes without this.
 */
export const writtenFor = { dependency: 'postgres', version: '3.4.9' } as const;

type Sql = ReturnType<typeof postgres>;

/** The result without the leading empty slots a previous failed statement left on the connection. */
export function withoutStaleRows<T>(value: T): T {
  if (!Array.isArray(value)) return value;
  const { count } = value as unknown[] & { count?: unknown };
  if (typeof count === 'number' && value.length > count) value.splice(0, value.length - count);
  return value;
}

/** `sql` whose statements resolve with their own rows only. */
export function withOwnRows(sql: Sql): Sql {
  const trimmed = (query: PromiseLike<unknown>): PromiseLike<unknown> => ({
    // biome-ignore lint/suspicious/noThenProperty: lazy, as postgres.js's own pending query: sent when awaited.
    then: (onFulfilled, onRejected) => query.then(withoutStaleRows).then(onFulfilled, onRejected),
  });
  const unsafe = (...args: Parameters<Sql['unsafe']>) => {
    const query = sql.unsafe(...args);
    return Object.assign(trimmed(query), { values: () => trimmed(query.values()) });
  };
  return new Proxy(sql, { get: (target, key) => (key === 'unsafe' ? unsafe : Reflect.get(target, key)) });
}
