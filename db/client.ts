import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
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

export type OpenOptions =
  | { url: string; maxConnections?: number }
  /** PGlite in process; `loadDataDir` starts from a dump (the test template) instead of an empty cluster. */
  | { url?: undefined; loadDataDir?: Blob };

export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const sql = postgres(options.url, {
      max: options.maxConnections ?? 10,
      onnotice: () => {},
      // Sessions read and write instants; the KST conversion is explicit in the queries (D-5).
      connection: { TimeZone: 'UTC' },
    });
    const db = drizzlePostgres(sql, { schema });
    return {
      db,
      driver: 'postgres',
      migrate: () => migratePostgres(db, { migrationsFolder: MIGRATIONS_FOLDER }),
      rows: async <T>(query: Parameters<Db['execute']>[0]) => (await db.execute(query)) as unknown as T[],
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const loadDataDir = 'loadDataDir' in options ? options.loadDataDir : undefined;
  const client = new PGlite({ extensions: { pg_trgm }, loadDataDir });
  await client.exec(`SET TIME ZONE 'UTC'`);
  const db = drizzlePglite(client, { schema });
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

/** The PGlite client behind a handle, for dumping a test template. */
export function pgliteOf(handle: DatabaseHandle): PGlite {
  const client = (handle as unknown as { pglite?: PGlite }).pglite;
  if (!client) throw new Error('not a PGlite handle');
  return client;
}
