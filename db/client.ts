import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { PoolSlots } from './pool-slots';
import * as schema from './schema';
import { withOwnRows } from './workarounds/postgres-js-stale-rows';

/** The one handle every query takes: both drivers satisfy it, so there is one code path for both. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export type DatabaseHandle = {
  db: Db;
  driver: 'pglite' | 'postgres';
  migrate(): Promise<void>;
  /** Rows of a raw statement, whichever driver answers (postgres.js returns an array, PGlite `{ rows }`). */
  rows<T>(query: Parameters<Db['execute']>[0]): Promise<T[]>;
  /** D-21: a small client of its own, so key and brand lists and `/readyz` never queue behind requests. */
  control: Db;
  /** D-21: the request pool's slots, one held by each call while it reads (postgres.js; PGlite serialises). */
  slots?: PoolSlots | undefined;
  /** Closes both clients; resolves within CLOSE_BOUND_MS whatever the database does. */
  close(): Promise<void>;
  /** The embedded client (PGlite only): the demo snapshot and the test template dump its files. */
  pglite?: PGlite;
};

/**
 * LISTEN on `channel`: `onNotify` gets each payload in the order the notifying transactions committed, and
 * `onListen` runs each time the listen becomes effective (again, after postgres.js reconnected its listener).
 */
export type Listen = (
  channel: string,
  onNotify: (payload: string) => void,
  onListen: () => void,
) => Promise<{ unlisten(): Promise<void> }>;

/** Work that is no request (the daily job) lifts the session's bounds (D-20) for its own transaction. */
export async function liftRequestBounds(tx: Pick<Db, 'execute'>): Promise<void> {
  for (const setting of ['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout'])
    await tx.execute(sql`SELECT set_config(${setting}, '0', true)`);
}

const CONTROL_CONNECTIONS = 2;
/** close(): running statements get CLOSE_GRACE_MS, and close() resolves by CLOSE_BOUND_MS even if cutting hangs. */
const CLOSE_GRACE_MS = 1_000;
const CLOSE_BOUND_MS = 2_000;

export const MIGRATIONS_FOLDER = path.resolve(import.meta.dirname, 'migrations');

/** PGlite lives in memory with one session: a shared server's buffers, WAL and connections only cost memory. */
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
/** initdb's options for a fresh embedded cluster: 1 MB WAL segments instead of 16 MB. */
export const PGLITE_INITDB_PARAMS: readonly string[] = ['--wal-segsize=1'];

export type OpenOptions =
  | {
      url: string;
      /** The request pool's size (D-21); 10 by default. */
      maxConnections?: number;
      /** D-20/D-21: statement and lock timeouts, and the wait for a pool slot; unset for the CLIs (no bounds). */
      bounds?: { statementTimeoutMs: number; lockTimeoutMs: number; poolWaitMs: number };
      /** Connecting gives up after this long; 30 s (postgres.js's default) if unset. */
      connectTimeoutMs?: number;
    }
  /**
   * PGlite, in memory or with its files in `dataDir` (an empty folder it owns); `loadDataDir` starts from a
   * dump (a tarball's bytes, or a Blob, gzip if its type says so).
   */
  | { url?: undefined; loadDataDir?: Blob | Uint8Array; dataDir?: string };

// Each driver is loaded only when a database of its kind is opened: a process uses one of the two.
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
      // Only the CLIs write arrays; failing mid-close, the types lookup is an unhandled rejection in postgres.js.
      fetch_types: bounds === undefined,
      connect_timeout: connectTimeoutMs / 1000,
      connection: {
        // Sessions read and write instants; the KST conversion is explicit in the queries (D-5).
        TimeZone: 'UTC',
        // D-20: PostgreSQL bounds every statement itself.
        ...(bounds && {
          statement_timeout: bounds.statementTimeoutMs,
          lock_timeout: bounds.lockTimeoutMs,
          idle_in_transaction_session_timeout: bounds.statementTimeoutMs,
        }),
      },
    };
    const size = options.maxConnections ?? 10;
    const sql = postgres(options.url, { ...settings, max: size });
    const controlSql = postgres(options.url, {
      ...settings,
      max: CONTROL_CONNECTIONS,
      // The webhook worker's statements run here, over tables that grow from empty: each run is planned for
      // the table as it is now, never by a generic plan kept from when it was small (D-28).
      connection: { ...settings.connection, plan_cache_mode: 'force_custom_plan' },
    });
    const db = drizzlePostgres(withOwnRows(sql), { schema });
    const control = drizzlePostgres(withOwnRows(controlSql), { schema });
    const slots =
      bounds && new PoolSlots(size, bounds.poolWaitMs, connectTimeoutMs + bounds.statementTimeoutMs + 1_000);
    // Each listen has a client of its own (postgres.js gives it one connection, listened again after a
    // reconnect); unlisten ends that client, so a listen that failed for good can be made afresh.
    const listening = new Set<ReturnType<typeof postgres>>();
    const listen: Listen = async (channel, onNotify, onListen) => {
      const client = postgres(options.url, { ...settings, max: 1 });
      listening.add(client);
      const unlisten = async () => {
        listening.delete(client);
        await client.end({ timeout: 0 });
      };
      try {
        await client.listen(channel, onNotify, onListen);
      } catch (error) {
        await unlisten();
        throw error;
      }
      return { unlisten };
    };
    attached.set(db, { control, slots, listen });
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
          controlSql.end({ timeout: 0 }),
          ...[...listening].map((client) => client.end({ timeout: 0 })),
        ]);
        await Promise.race([ended, delay(CLOSE_BOUND_MS, undefined, { ref: false })]);
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
  // One session in the process: what it notifies reaches its own listeners, and there is no reconnect.
  const listen: Listen = async (channel, onNotify, onListen) => {
    const unlisten = await client.listen(channel, onNotify);
    onListen();
    return { unlisten: () => unlisten() };
  };
  attached.set(db, { control: db, slots: undefined, listen });
  return {
    db,
    driver: 'pglite',
    control: db,
    migrate: () => migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER }),
    rows: async <T>(query: Parameters<Db['execute']>[0]) =>
      ((await db.execute(query)) as unknown as { rows: T[] }).rows,
    close: () => client.close(),
    pglite: client,
  };
}

/** A tarball already in memory, handed to PGlite without copies (it reads a dump only through `arrayBuffer()`). */
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

const attached = new WeakMap<Db, { control: Db; slots: PoolSlots | undefined; listen: Listen }>();

export function controlOf(db: Db): Db {
  return attached.get(db)?.control ?? db;
}

export function slotsOf(db: Db): PoolSlots | undefined {
  return attached.get(db)?.slots;
}

/** LISTEN on the database of `db` (a database opened by openDatabase). */
export function listenerOf(db: Db): Listen {
  const listen = attached.get(db)?.listen;
  if (!listen) throw new Error('not a database opened by openDatabase');
  return listen;
}

export function pgliteOf(handle: DatabaseHandle): PGlite {
  if (!handle.pglite) throw new Error('not a PGlite handle');
  return handle.pglite;
}
