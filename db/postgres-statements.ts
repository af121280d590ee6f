import type postgres from 'postgres';
import { RERUNS_AFTER_FOREIGN_CANCEL, rerunAfterForeignCancel } from './cancel-reruns';
import { QueryAbortedError, querySignal } from './cancellation';
import { mustPlanPerCall } from './plans';
import { type PoolGate, statementLane } from './pool-gate';
import { cancelRunning } from './workarounds/postgres-js-cancel';
import { keepOwnRows } from './workarounds/postgres-js-stale-rows';

type Sql = ReturnType<typeof postgres>;

/**
 * The request pool as drizzle sees it: postgres.js with every statement passing `run` below, the one
 * place each of them goes through (drizzle sends every statement through `unsafe()`, and a transaction
 * through `begin()`). In order, a statement:
 * 1. is prepared (preparedOptions);
 * 2. waits for a permit of the pool gate (db/pool-gate.ts: bounded, at most half the pool per lane) before
 *    postgres.js sees it, and gives the permit back when it settles;
 * 3. is cancelled when its query signal aborts while it runs (db/cancellation.ts, D-20), on `control`;
 *    one not yet running gives its permit back then;
 * 4. resolves with its own rows only (db/workarounds/postgres-js-stale-rows.ts);
 * 5. runs again if another statement's cancel reached it (db/cancel-reruns.ts).
 */
export function requestStatements(sql: Sql, gate: PoolGate, control: Sql): Sql {
  const unsafe = sql.unsafe.bind(sql);
  const begin = sql.begin.bind(sql) as (...args: unknown[]) => Promise<unknown>;
  type Args = Parameters<Sql['unsafe']>;
  type Pending = ReturnType<Sql['unsafe']>;
  const run = (args: Args, signal: AbortSignal | undefined, lane: string | undefined, reruns: number): Pending => {
    const [text, parameters, options] = args;
    const query = unsafe(text, parameters, preparedOptions(sql, parameters, options));
    const start = (query as unknown as { handle: () => Promise<void> }).handle.bind(query);
    let admitted: Promise<void> | undefined;
    // postgres.js starts a query from its `handle()` (its then/catch/finally call it); it starts only
    // once a permit is held.
    const handle = () => {
      admitted ??= gate
        .acquire(lane, signal)
        .then((release) => {
          // Its request went while the permit was granted: it is not started at all.
          if (signal?.aborted) {
            release();
            throw new QueryAbortedError(signal.reason);
          }
          Promise.prototype.then.call(query, release, release);
          if (signal) {
            // Running on the server: cancelled there, and its permit held until it stops. Not running (a
            // connecting socket holds it, which may wait out an outage): its permit is given back now.
            const cancel = () => cancelRunning(control, query, text) || release();
            signal.addEventListener('abort', cancel, { once: true });
            Promise.prototype.then.call(query, ...twice(() => signal.removeEventListener('abort', cancel)));
          }
          return start();
        })
        .catch((error: unknown) => (query as unknown as { reject: (error: unknown) => void }).reject(error));
      return admitted;
    };
    Object.defineProperty(query, 'handle', { value: handle });
    keepOwnRows(query);
    return reruns > 0
      ? rerunAfterForeignCancel(query, signal, (): Pending => run(args, signal, lane, reruns - 1))
      : query;
  };
  const statement = (...args: Args) => run(args, querySignal(), statementLane(), RERUNS_AFTER_FOREIGN_CANCEL);
  // A transaction holds a connection for its whole length: it holds a permit as long, past the hold limit.
  const transaction = async (...args: unknown[]) => {
    const release = await gate.acquire(undefined, querySignal(), { holdLimit: false });
    try {
      return await begin(...args);
    } finally {
      release();
    }
  };
  return new Proxy(sql, {
    get: (target, key, receiver) =>
      key === 'unsafe' ? statement : key === 'begin' ? transaction : Reflect.get(target, key, receiver),
  });
}

const twice = <T>(f: T): [T, T] => [f, f];

/**
 * Every statement with parameters as a named prepared statement, kept per connection. drizzle asks
 * postgres.js for an unnamed one unless the query was built with `.prepare()`: parsed and planned afresh on
 * every call. Prepared, a statement is parsed once per connection, and PostgreSQL may run it on a generic
 * plan once that costs no more than its custom plans did (plan_cache_mode auto): planning was most of the
 * database's cost of a list page. Statements whose best plan depends on their values (db/plans.ts:
 * keywords) stay unnamed, so each call is planned for its own values. The statements are as many as the
 * distinct SQL texts (filter combinations and page sizes, not values; LIMIT is written into the text,
 * db/queries/pagination.ts) and go with their connection. postgres.js's own `prepare: false`
 * (`?prepare=false` in DATABASE_URL, e.g. behind a pooler in transaction mode) turns it off.
 */
function preparedOptions(
  sql: Sql,
  parameters: Parameters<Sql['unsafe']>[1],
  options: Parameters<Sql['unsafe']>[2],
): Parameters<Sql['unsafe']>[2] {
  if (!parameters?.length || !sql.options.prepare) return options;
  // Unnamed when planned per call, even if the query builder asked for a named one (a statement built once).
  return { ...options, prepare: !mustPlanPerCall() };
}
