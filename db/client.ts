import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { QueryAbortedError, querySignal } from './cancellation';
import { mustPlanPerCall } from './plans';
import * as schema from './schema';

/** The one handle every query takes: both drivers satisfy it, so there is one code path for both. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export type DatabaseHandle = {
  db: Db;
  driver: 'pglite' | 'postgres';
  /** Apply the committed migrations (db/migrations), idempotently. */
  migrate(): Promise<void>;
  /** Rows of a raw statement, whichever driver answers (postgres.js returns an array, PGlite `{ rows }`). */
  rows<T>(query: Parameters<Db['execute']>[0]): Promise<T[]>;
  close(): Promise<void>;
};

export const MIGRATIONS_FOLDER = path.resolve(import.meta.dirname, 'migrations');

/**
 * PostgreSQL settings of the embedded PGlite. Its files live in memory (JS buffers) and it has
 * one session, so PostgreSQL's defaults for a shared server only cost memory and start-up time here:
 * - shared_buffers 128 MB → 16 MB: the demo database is ≈ 20 MB and its "disk" is memory anyway; the
 *   pool is zeroed at start (the largest single cost of PGlite's start) and every
 *   page it touches stays resident.
 * - WAL: nothing replicates or recovers an in-memory cluster, so the WAL is kept minimal (no full-page
 *   images, small segments and buffers; segments are 1 MB from initdb, below); PGlite keeps every WAL
 *   file in memory, and with 16 MB segments they were half of a dump of the demo data.
 * - max_connections: one session (PGlite is single-user); fewer slots, less shared memory.
 */
export const PGLITE_SETTINGS: readonly string[] = [
  'shared_buffers=16MB',
  'wal_buffers=1MB',
  'wal_level=minimal',
  'max_wal_senders=0',
  'full_page_writes=off',
  'min_wal_size=2MB',
  'max_wal_size=16MB',
  'max_connections=4',
];
/** initdb's options for a fresh embedded cluster: 1 MB WAL segments instead of 16 MB (see above). */
export const PGLITE_INITDB_PARAMS: readonly string[] = ['--wal-segsize=1'];

export type OpenOptions =
  | {
      url: string;
      maxConnections?: number;
      /**
       * D-20, for the server: each statement is cut off by PostgreSQL after this long, and connecting
       * gives up after `connectTimeoutMs`. Unset for the CLIs, whose migrations and bulk loads run long.
       */
      statementTimeoutMs?: number;
      connectTimeoutMs?: number;
    }
  /**
   * PGlite in process; `loadDataDir` starts from a dump (the test template, the cached demo cluster) instead
   * of an empty cluster: an uncompressed tarball's bytes, or a Blob (gzip if its type says so).
   */
  | {
      url?: undefined;
      loadDataDir?: Blob | Uint8Array;
      /**
       * A directory on disk for the cluster's files (PGlite's NodeFS), empty or absent at start: the files
       * then live in the OS page cache instead of the process's memory (the embedded default's
       * RSS). Without it they are JS buffers (tests, which start from a template many times a run).
       */
      dataDir?: string;
    };

export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const sql = postgres(options.url, {
      max: options.maxConnections ?? 10,
      onnotice: () => {},
      // Seconds; postgres.js waits 30 s by default, longer than a request may take (D-20).
      connect_timeout: (options.connectTimeoutMs ?? 30_000) / 1000,
      connection: {
        // Sessions read and write instants; the KST conversion is explicit in the queries (D-5).
        TimeZone: 'UTC',
        ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
      },
    });
    const db = drizzlePostgres(cancellablePostgres(preparedStatements(sql)), { schema });
    return {
      db,
      driver: 'postgres',
      migrate: () => migratePostgres(db, { migrationsFolder: MIGRATIONS_FOLDER }),
      rows: async <T>(query: Parameters<Db['execute']>[0]) => (await db.execute(query)) as unknown as T[],
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const dump = 'loadDataDir' in options ? options.loadDataDir : undefined;
  const client = new PGlite({
    dataDir: 'dataDir' in options ? options.dataDir : undefined,
    extensions: { pg_trgm },
    loadDataDir: dump instanceof Uint8Array ? new BytesBlob(dump) : dump,
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])],
    initDbStartParams: [...PGLITE_INITDB_PARAMS],
  });
  await client.exec(`SET TIME ZONE 'UTC'`);
  const db = drizzlePglite(cancellablePglite(client), { schema });
  return {
    db,
    driver: 'pglite',
    migrate: () => migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER }),
    rows: async <T>(query: Parameters<Db['execute']>[0]) =>
      ((await db.execute(query)) as unknown as { rows: T[] }).rows,
    close: () => client.close(),
    // Exposed for the test template (dumpDataDir); not part of DatabaseHandle's contract.
    ...({ pglite: client } as object),
  };
}

/**
 * A tarball already in memory, handed to PGlite without copies. PGlite only reads a dump through
 * `arrayBuffer()`; a real Blob copies the bytes in and reads them back in small chunks, which took over a
 * second for the 40 MB demo cluster under load.
 */
class BytesBlob extends Blob {
  #bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    super([], { type: 'application/x-tar' });
    this.#bytes = bytes;
  }
  /** Read once: PGlite keeps its options, and with them this blob, for the life of the instance. */
  override async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#bytes;
    this.#bytes = new Uint8Array(0);
    const { buffer, byteOffset, byteLength } = bytes;
    return buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength
      ? buffer
      : (bytes.slice().buffer as ArrayBuffer);
  }
}

/** The PGlite client behind a handle, for dumping a test template. */
export function pgliteOf(handle: DatabaseHandle): PGlite {
  const client = (handle as unknown as { pglite?: PGlite }).pglite;
  if (!client) throw new Error('not a PGlite handle');
  return client;
}

type Sql = ReturnType<typeof postgres>;

/**
 * Every statement with parameters as a named prepared statement, kept per connection. drizzle
 * asks postgres.js for an unnamed one unless the query was built with `.prepare()`: parsed and planned
 * afresh on every call. Prepared, a statement is parsed once per connection, and PostgreSQL may run it on
 * a generic plan once that costs no more than its custom plans did (plan_cache_mode auto): planning was
 * most of the database's cost of a list page. Statements whose best plan depends on their values
 * (db/plans.ts: keywords) stay unnamed, so each call is planned for its own values. The statements are
 * as many as the distinct SQL texts (filter combinations and page sizes, not values; LIMIT is written
 * into the text, db/queries/pagination.ts) and go with their connection. postgres.js's own
 * `prepare: false` (`?prepare=false` in DATABASE_URL, e.g. behind a pooler in transaction mode) turns it off.
 */
function preparedStatements(sql: Sql): Sql {
  const unsafe = sql.unsafe.bind(sql);
  const prepared = (query: string, parameters?: Parameters<Sql['unsafe']>[1], options?: Parameters<Sql['unsafe']>[2]) =>
    unsafe(
      query,
      parameters,
      parameters?.length && sql.options.prepare && !mustPlanPerCall() ? { ...options, prepare: true } : options,
    );
  return new Proxy(sql, {
    get: (target, key, receiver) => (key === 'unsafe' ? prepared : Reflect.get(target, key, receiver)),
  });
}

/**
 * postgres.js with the query signal of db/cancellation.ts: drizzle sends every statement through
 * `unsafe()`, and a statement running on the server for a request whose client has gone or whose deadline
 * passed is cancelled, so it frees its connection instead of holding it to the end (D-20). Every statement
 * also passes withoutLeadingHoles (below), with or without a signal.
 *
 * A cancel by backend pid can reach the wrong statement: it travels on another pooled connection, often
 * queued or pipelined behind other statements, and by the time PostgreSQL runs it the backend may have
 * finished the gone request's statement and started another request's, of the very same text under
 * uniform load (seen under autocannon: a few 500s whenever autocannon closed its connections). The
 * API only reads, so a statement cancelled "due to user request" while its own work is still wanted is
 * run again, up to twice; a statement whose own signal aborted is not.
 */
function cancellablePostgres(sql: Sql): Sql {
  const unsafe = sql.unsafe.bind(sql);
  const cancellable = (...args: Parameters<Sql['unsafe']>) => run(args, RERUNS_AFTER_FOREIGN_CANCEL);
  const run = (args: Parameters<Sql['unsafe']>, reruns: number) => {
    const query = unsafe(...args);
    const signal = querySignal();
    // Only a pending query may be cancelled: a late cancel would reach the backend's next statement,
    // another request's. Completion is seen through the query's own `then` (calling `then` here would
    // start it before drizzle asks for `.values()`).
    let pending = true;
    const cancel = () => {
      if (!pending) return;
      const { state, active } = query as unknown as { state?: { pid?: number }; active?: boolean };
      // Only a statement running on the server is cancelled, by its backend's pid through the pool.
      // postgres.js's own cancel wedged the pool past recovery when the server was unreachable (its side
      // connection for a running statement, and its queue removal for one a connecting socket already
      // held; test/faults.test.ts "down"). A statement not yet running is left to run, bounded by the
      // statement timeout; its request has already answered.
      if (!state) return;
      // Only while that backend is still running this statement's text; what slips through (the same
      // text, another request's) is run again by its owner, above.
      if (active && state.pid)
        unsafe(
          `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query = $2`,
          [state.pid, args[0]],
        ).then(
          () => undefined,
          () => undefined,
        );
    };
    if (signal?.aborted) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
    type Then = (onFulfilled?: (value: unknown) => unknown, onRejected?: (error: unknown) => unknown) => unknown;
    const then = query.then.bind(query) as unknown as Then;
    const settle = () => {
      pending = false;
      signal?.removeEventListener('abort', cancel);
    };
    const observed: Then = (onFulfilled, onRejected) =>
      then(
        (value) => {
          settle();
          const rows = withoutLeadingHoles(value);
          return onFulfilled ? onFulfilled(rows) : rows;
        },
        (error) => {
          settle();
          if (reruns > 0 && cancelledByUser(error) && !signal?.aborted) {
            // The same statement in the same form (drizzle asked for `.values()` or rows) and the same scope.
            const again = run(args, reruns - 1) as unknown as { isRaw?: unknown; then: Then };
            again.isRaw = (query as unknown as { isRaw?: unknown }).isRaw;
            return again.then(onFulfilled, onRejected);
          }
          if (onRejected) return onRejected(error);
          throw error;
        },
      );
    Object.defineProperty(query, 'then', { value: observed });
    return query;
  };
  return new Proxy(sql, {
    get: (target, key, receiver) => (key === 'unsafe' ? cancellable : Reflect.get(target, key, receiver)),
  });
}

/**
 * postgres.js (3.4.9) counts a statement's rows on its connection and resets the count only when a
 * statement completes: after one that failed while sending rows (cancelled, timed out, or an error in a
 * row), the next statement on that connection resolves with that many empty slots before its own rows
 * (porsager/postgres#1119, #1181; fixes unreleased). The bench met it as review-stats pages whose first
 * items were `undefined` (a 500 by the output schema) right after autocannon dropped its connections. The
 * holes are always leading and the result's `count` is right, so the rows are the last `count` entries.
 */
function withoutLeadingHoles(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  const { count } = value as unknown[] & { count?: unknown };
  if (typeof count !== 'number' || value.length <= count) return value;
  value.splice(0, value.length - count);
  return value;
}

/** How often a statement cancelled by another request's cancel is run again (cancellablePostgres). */
const RERUNS_AFTER_FOREIGN_CANCEL = 2;

/** PostgreSQL's query_canceled by pg_cancel_backend (a statement timeout has the same code, another text). */
function cancelledByUser(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '57014' && typeof message === 'string' && message.includes('user request');
}

/**
 * PGlite with the query signal: it runs one statement at a time in this thread, so a statement cannot be
 * interrupted, but one whose request has gone while it waited its turn is dropped instead of run. Without
 * this, abandoned requests queue work ahead of live ones (1,000 gone clients delayed the next call by
 * seconds). The turn is taken here, in call order, as PGlite itself would.
 */
function cancellablePglite(client: PGlite): PGlite {
  let turn: Promise<unknown> = Promise.resolve();
  const query = client.query.bind(client) as PGlite['query'];
  const cancellable = ((...args: Parameters<PGlite['query']>) => {
    const signal = querySignal();
    const queued = turn.then(() => {
      if (signal?.aborted) throw new QueryAbortedError(signal.reason);
      return query(...args);
    });
    turn = queued.catch(() => undefined);
    if (!signal) return queued;
    // The caller is answered at once when its signal aborts, while its turn is skipped later.
    return new Promise<Awaited<typeof queued>>((resolve, reject) => {
      const abort = () => reject(new QueryAbortedError(signal.reason));
      if (signal.aborted) abort();
      signal.addEventListener('abort', abort, { once: true });
      queued.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    });
  }) as PGlite['query'];
  // PGlite keeps its state in #private fields: its methods must run on the instance, not on the proxy.
  return new Proxy(client, {
    get: (target, key) => {
      if (key === 'query') return cancellable;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
