import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sql } from 'drizzle-orm';
import { inject } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { afterFile } from './after-file';
import { withDatabase } from './global-setup';
import { adminSql } from './postgres';

/** The run's fixed clock: the demo data's "today" and every test's "today" are the same KST day. */
export const NOW = new Date(inject('now'));

export const DRIVER: 'pglite' | 'postgres' = inject('postgresTemplate') ? 'postgres' : 'pglite';

/**
 * A private copy of the seeded template for the calling test file (closed and dropped after it), so
 * files may write (factories) without seeing each other. May be called in beforeAll or in a test.
 */
export async function openTestDatabase(): Promise<DatabaseHandle & { url?: string }> {
  const template = inject('postgresTemplate');
  if (template) {
    const admin = adminSql(template.url);
    const name = `partner_t_${randomBytes(6).toString('hex')}`;
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template.name}`);
    const url = withDatabase(template.url, name);
    const handle = Object.assign(await openDatabase({ url, maxConnections: 4 }), { url });
    afterFile(async () => {
      await handle.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    });
    return handle;
  }
  const dump = await readFile(inject('pgliteDump'));
  const handle = await openDatabase({ loadDataDir: dump });
  afterFile(() => handle.close());
  return handle;
}

/**
 * Waits until every transaction begun before the call has ended, on the whole server: the review change
 * feed hands out a change only then (D-26), and the test files of a run share one PostgreSQL.
 */
export async function transactionsSettled(handle: DatabaseHandle): Promise<void> {
  const [mark] = await handle.rows<{ xid: string }>(sql`SELECT pg_current_xact_id()::text AS xid`);
  for (let waited = 0; waited < 30_000; waited += 50) {
    const [now] = await handle.rows<{ xmin: string }>(
      sql`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`,
    );
    if (BigInt(now?.xmin ?? 0) > BigInt(mark?.xid ?? 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('a transaction of the server stayed open for 30 s');
}
