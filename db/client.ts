import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { PoolSlots } from './pool-slots';
import * as schema from './schema';
import { withOwnRows } from './workarounds/postgres-js-stale-rows';

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
   * statements: the key and brand lists and `/readyz`. PGlite has one session: `db` itself.
   */
  control: Db;
  /** D-21: the request pool's slots, one held by each call while it reads (postgres.js; PGlite serialises). */
  slots?: PoolSlots | undefined;
  /** Closes both clients; resolves within CLOSE_BOUND_MS whatever the database does. */
  close(): Promise<void>;
};

/** Connections of the control client (DatabaseHandle.control), beside the request pool. */
const CONTROL_CONNECTIONS = 2;
/** close(): running statements get this long to finish before the connections are cut. */
const CLOSE_GRACE_MS = 1_000;
/** close() resolves by then, even if cutting the connections hangs (a stalled network). */
const CLOSE_BOUND_MS = 2_000;

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
       * D-20/D-21, for the server: PostgreSQL cuts a statement off after `statementTimeoutMs` and a wait
       * for a lock after `lockTimeoutMs`; a call waits at most `poolWaitMs` for a slot of the pool.
       * Unset for the CLIs, whose migrations and bulk loads run long: no bounds, no slots.
       */
      bounds?: { statementTimeoutMs: number; lockTimeoutMs: number; poolWaitMs: number };
      /** Connecting gives up after this long; 30 s (postgres.js's default) if unset. */
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
    const connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
    const bounds = options.bounds;
    const settings = {
      onnotice: () => {},
      // drizzle parses array columns itself; postgres.js's lookup of array types on connect would cost a
      // round trip per connection, and its failure (a pool closed while connecting) is an unhandled rejection.
      fetch_types: false,
      connect_timeout: connectTimeoutMs / 1000,
      connection: {
        // Sessions read and write instants; the KST conversion is explicit in the queries (D-5).
        TimeZone: 'UTC',
        // D-20: PostgreSQL bounds every statement itself; the daily build lifts these for its transaction.
        ...(bounds && {
          statement_timeout: bounds.statementTimeoutMs,
          lock_timeout: bounds.lockTimeoutMs,
          idle_in_transaction_session_timeout: bounds.statementTimeoutMs,
        }),
      },
    };
    const size = options.maxConnections ?? 10;
    const sql = postgres(options.url, { ...settings, max: size });
    const controlSql = postgres(options.url, { ...settings, max: CONTROL_CONNECTIONS });
    const db = drizzlePostgres(withOwnRows(sql), { schema });
    const control = drizzlePostgres(withOwnRows(controlSql), { schema });
    // A slot outlives connecting plus the statement timeout by a second at most (db/pool-slots.ts).
    const slots =
      bounds && new PoolSlots(size, bounds.poolWaitMs, connectTimeoutMs + bounds.statementTimeoutMs + 1_000);
    attached.set(db, { control, slots });
    return {
      db,
      driver: 'postgres',
      migrate: () => migratePostgres(db, { migrationsFolder: MIGRATIONS_FOLDER }),
      rows: async <T>(query: Parameters<Db['execute']>[0]) => (await db.execute(query)) as unknown as T[],
      control,
      slots,
      close: async () => {
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
  const db = drizzlePglite(client, { schema });
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

const attached = new WeakMap<Db, { control: Db; slots: PoolSlots | undefined }>();

/** The control client of the handle whose `db` this is (DatabaseHandle.control); PGlite's is `db` itself. */
export function controlOf(db: Db): Db {
  return attached.get(db)?.control ?? db;
}

/** The request pool's slots of the handle whose `db` this is (DatabaseHandle.slots), if it has them. */
export function slotsOf(db: Db): PoolSlots | undefined {
  return attached.get(db)?.slots;
}

/** The PGlite client behind a handle, for dumping a test template. */
export function pgliteOf(handle: DatabaseHandle): PGlite {
  const client = (handle as unknown as { pglite?: PGlite }).pglite;
  if (!client) throw new Error('not a PGlite handle');
  return client;
}
