// Bulk loading for the large seed: on PostgreSQL, COPY … FROM STDIN through postgres.js, with the
// table's secondary indexes built after the load; on PGlite, multi-row inserts. Either way one transaction,
// and the planner statistics and visibility map are brought up to date afterwards (the local PostgreSQL
// runs with autovacuum off: straight after a million rows the planner guessed 29 rows for 84,032).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { getTableColumns, getTableName, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import type { Db } from '../client';

/** Writes chunks of rows into a table inside the seed's transaction. */
export type BulkWriter = (table: PgTable, chunks: Iterable<readonly Record<string, unknown>[]>) => Promise<void>;

/** COPY's text format: `\N` for null, and backslash, tab, newline and carriage return escaped. */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  return String(value).replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

/**
 * The columns COPY writes, from the drizzle table: every stored column but generated ones and serial keys
 * (which the database fills), each with drizzle's own conversion to the driver value (timestamps to ISO
 * text, arrays to `{"…"}` literals), so the file and an INSERT of the same row store the same values.
 */
export function copyColumns(table: PgTable) {
  return Object.entries(getTableColumns(table))
    .filter(([, column]) => !column.generated && !column.columnType.includes('Serial'))
    .map(([key, column]) => ({ key, name: column.name, hasDefault: column.hasDefault, column }));
}

/** One row as a COPY text line. A column with a default must be given: COPY cannot ask for DEFAULT per row. */
export function copyLine(columns: ReturnType<typeof copyColumns>, row: Readonly<Record<string, unknown>>): string {
  return `${columns
    .map(({ key, name, hasDefault, column }) => {
      const value = row[key];
      if (value === undefined && hasDefault) throw new Error(`copyLine: ${name} has a default; give it a value`);
      return copyField(value === undefined || value === null ? null : column.mapToDriverValue(value));
    })
    .join('\t')}\n`;
}

/**
 * The postgres.js client a drizzle database or transaction runs on (`db._.session.client`, public on
 * drizzle's PostgresJsSession), or undefined on PGlite.
 */
function postgresClient(db: Db): postgres.Sql | undefined {
  const client = (db._.session as unknown as { client?: { unsafe?: unknown } }).client;
  // PGlite's client has no `unsafe`; postgres.js's (and its transactions') has.
  return typeof client?.unsafe === 'function' ? (client as postgres.Sql) : undefined;
}

/**
 * Runs `body` in one transaction with a writer for its big tables. On PostgreSQL the writer COPYs, after
 * dropping the table's indexes that back no constraint and before recreating them from their own
 * definitions (pg_get_indexdef), so whatever indexes the migrations define are rebuilt as they were, each
 * in one sorted pass instead of a million trigram insertions. A failure rolls all of it back.
 */
export async function inBulkTransaction<T>(db: Db, body: (tx: Db, write: BulkWriter) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const client = postgresClient(tx);
    if (!client) {
      return body(tx, async (table, chunks) => {
        for (const rows of chunks) if (rows.length > 0) await tx.insert(table).values(rows as never);
      });
    }
    // Index builds sort in memory; 1 GB holds a million rows' trigram entries (the default is 64 MB).
    await client`SET LOCAL maintenance_work_mem = '1GB'`;
    return body(tx, async (table, chunks) => {
      const name = getTableName(table);
      const indexes = await client<{ name: string; definition: string }[]>`
        SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
        FROM pg_index i
        WHERE i.indrelid = ${name}::regclass
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`;
      for (const index of indexes) await client.unsafe(`DROP INDEX ${index.name}`);
      // Known limit: postgres.js (3.4) resolves the COPY query with the stream, so an error the server
      // raises mid-COPY (a constraint the generator broke) is never surfaced and the stream never finishes:
      // the seed then hangs instead of failing. The generator's rows satisfy every constraint
      // (test/seed-bulk.test.ts writes awkward values through this path).
      const columns = copyColumns(table);
      const stream =
        await client`COPY ${client(name)} (${client(columns.map((column) => column.name))}) FROM STDIN`.writable();
      await pipeline(
        Readable.from(
          (function* () {
            for (const rows of chunks) yield rows.map((row) => copyLine(columns, row)).join('');
          })(),
        ),
        stream,
      );
      for (const index of indexes) await client.unsafe(index.definition);
    });
  });
}

/**
 * VACUUM (ANALYZE) the tables a bulk load wrote: current statistics for the planner, and the visibility
 * map that index-only scans need. Outside any transaction (VACUUM cannot run inside one).
 */
export async function refreshStatistics(db: Db, tables: readonly PgTable[]): Promise<void> {
  for (const table of tables) await db.execute(sql`VACUUM (ANALYZE) ${table}`);
}
