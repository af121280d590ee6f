import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { cancellablePglite } from './pglite-turns';
import { PoolGate, type PoolStats } from './pool-gate';
import { requestStatements } from './postgres-statements';
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
  /**
   * D-21: a small client of its own to the same database, for what must never queue behind request
   * statements: the key and brand directories, `/readyz`, cancels. PGlite has one session: `db` itself.
   */
  control: Db;
  /** The request pool now (postgres.js only): its size, statements holding a connection, statements waiting. */
  poolStats?(): PoolStats;
  /** Closes both clients; resolves within CLOSE_BOUND_MS whatever the database does. */
  close(): Promise<void>;
};

/** Connections of the control client (DatabaseHandle.control), beside the request pool. */
export const CONTROL_CONNECTIONS = 2;
/** A permit outlives connecting plus the statement timeout by this much at most (db/pool-gate.ts). */
const HOLD_MARGIN_MS = 1_000;
/** close(): running statements get this long to finish before the connections are cut. */
const CLOSE_GRACE_MS = 1_000;
/** close() resolves by then, even if cutting the connections hangs (a stalled network). */
export const CLOSE_BOUND_MS = 2_000;

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
      /** The request pool's size (D-21); 10 by default. */
      maxConnections?: number;
      /**
       * D-21: how long a statement may wait for a connection of the request pool before it fails with
       * PoolBusyError. Unset: as long as it takes (the CLIs).
       */
      poolWaitMs?: number;
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

// Each driver and its drizzle adapter are loaded when a database of that kind is opened: a process uses
// one of the two, and loading the other was part of every start.
export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const [{ default: postgres }, { drizzle: drizzlePostgres }, { migrate: migratePostgres }] = await Promise.all([
      import('postgres'),
      import('drizzle-orm/postgres-js'),
      import('drizzle-orm/postgres-js/migrator'),
    ]);
    const settings = {
      onnotice: () => {},
      // Seconds; postgres.js waits 30 s by default, longer than a request may take (D-20).
      connect_timeout: (options.connectTimeoutMs ?? 30_000) / 1000,
      connection: {
        // Sessions read and write instants; the KST conversion is explicit in the queries (D-5).
        TimeZone: 'UTC',
        ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
      },
    };
    const size = options.maxConnections ?? 10;
    const sql = postgres(options.url, { ...settings, max: size });
    const controlSql = postgres(options.url, { ...settings, max: CONTROL_CONNECTIONS });
    const gate = new PoolGate(
      size,
      options.poolWaitMs,
      options.statementTimeoutMs === undefined
        ? undefined
        : (options.connectTimeoutMs ?? 30_000) + options.statementTimeoutMs + HOLD_MARGIN_MS,
    );
    const db = drizzlePostgres(requestStatements(sql, gate, controlSql), { schema });
    const control = drizzlePostgres(controlSql, { schema });
    controls.set(db, control);
    return {
      db,
      driver: 'postgres',
      migrate: () => migratePostgres(db, { migrationsFolder: MIGRATIONS_FOLDER }),
      rows: async <T>(query: Parameters<Db['execute']>[0]) => (await db.execute(query)) as unknown as T[],
      control,
      poolStats: () => gate.stats(),
      close: async () => {
        gate.close();
        const ended = Promise.all([
          sql.end({ timeout: CLOSE_GRACE_MS / 1000 }),
          // Directory loads and readiness probes are not worth waiting for.
          controlSql.end({ timeout: 0 }),
        ]);
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CLOSE_BOUND_MS);
        });
        await Promise.race([ended, bound]).finally(() => clearTimeout(timer));
      },
    };
  }
  const [{ PGlite }, { pg_trgm }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
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
    control: db,
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

const controls = new WeakMap<Db, Db>();

/** The control client of the handle whose `db` this is (DatabaseHandle.control); PGlite's is `db` itself. */
export function controlOf(db: Db): Db {
  return controls.get(db) ?? db;
}

/** The PGlite client behind a handle, for dumping a test template. */
export function pgliteOf(handle: DatabaseHandle): PGlite {
  const client = (handle as unknown as { pglite?: PGlite }).pglite;
  if (!client) throw new Error('not a PGlite handle');
  return client;
}
