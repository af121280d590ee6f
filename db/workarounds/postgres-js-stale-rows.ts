import type postgres from 'postgres';

/**
 * Defect: after a statement failed while sending rows, postgres.js gives the next one leading empty slots
 * (porsager/postgres#1119). Workaround: keep the last `count` rows, in `sql.unsafe()` (drizzle's only path).
 * Remove when a release fixes it; test/faults.test.ts "a statement that fails while sending its rows" shows it.
 */
export const writtenFor = { dependency: 'postgres', version: '3.4.9' } as const;

type Sql = ReturnType<typeof postgres>;

export function withoutStaleRows<T>(value: T): T {
  if (!Array.isArray(value)) return value;
  const { count } = value as unknown[] & { count?: unknown };
  if (typeof count === 'number' && value.length > count) value.splice(0, value.length - count);
  return value;
}

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
