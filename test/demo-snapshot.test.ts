import { appendFile, cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDailyAggregate } from '../db/aggregate';
import { type DatabaseHandle, MIGRATIONS_FOLDER, openDatabase } from '../db/client';
import { readSnapshot, snapshotKey, writeSnapshot } from '../db/demo-snapshot';
import { openEmbeddedDemo } from '../db/embedded';
import { likePattern, matchesKeyword } from '../db/queries/reviews/rules';
import { reviews } from '../db/schema';
import { seedDemo } from '../db/seed/demo';

// The embedded default starts from a migrated, empty cluster made at build time (db/demo-snapshot.ts).
// It holds no demo data, so one build serves every day (D-3: the data is relative to today in KST); it is
// used only while it matches the migrations and PGlite, and the demo data started from it is the same as
// the data built from scratch on the same day.
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'partner-api-demo-snapshot-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('demo snapshot key', () => {
  it('is the same for a copy of the migrations, and changes with any migration', async () => {
    const copy = path.join(scratch, 'migrations');
    await cp(MIGRATIONS_FOLDER, copy, { recursive: true });
    expect(snapshotKey(copy)).toBe(snapshotKey());
    const last = (await readdir(copy)).filter((name) => name.endsWith('.sql')).sort();
    await appendFile(path.join(copy, last.at(-1) ?? ''), '\n-- changed\n');
    expect(snapshotKey(copy)).not.toBe(snapshotKey());
  });
});

/** Rows and an order-independent checksum of every table, and the definition of every index and constraint. */
async function contents(database: DatabaseHandle) {
  const tables = await database.rows<{ name: string }>(
    sql`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  const out: Record<string, { rows: number; md5: string }> = {};
  for (const { name } of tables) {
    // When a run started and finished is the clock of that run, not data.
    const row = name === 'aggregate_runs' ? sql.raw('(x.id, x.through_day)') : sql.raw('x');
    const [result] = await database.rows<{ rows: number; md5: string }>(sql`
      SELECT count(*)::int AS rows, md5(coalesce(string_agg(${row}::text, E'\n' ORDER BY ${row}::text), '')) AS md5
      FROM ${sql.identifier(name)} AS x`);
    if (result) out[name] = result;
  }
  const indexes = await database.rows<{ name: string; definition: string }>(
    sql`SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`,
  );
  // Every constraint, by name and definition: the start drops the foreign keys for its load and adds them back.
  const constraints = await database.rows<{ relation: string; name: string; definition: string }>(
    sql`SELECT conrelid::regclass::text AS relation, conname AS name, pg_get_constraintdef(oid) AS definition
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`,
  );
  const sequences = await database.rows<{ name: string; last: string }>(
    sql`SELECT sequencename AS name, last_value::text AS last FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`,
  );
  return { tables: out, indexes, constraints, sequences };
}

describe('demo snapshot', () => {
  it('is read back when it matches its key and checksum, else a miss', async () => {
    const dir = path.join(scratch, 'entry');
    expect(await readSnapshot(dir)).toEqual({ miss: 'none' });
    const { key } = await writeSnapshot(dir);
    expect(key).toBe(snapshotKey());
    expect('tarball' in (await readSnapshot(dir))).toBe(true);
    expect(await readSnapshot(dir, 'another')).toEqual({ miss: 'built for other migrations or another PGlite' });
    await writeFile(path.join(dir, 'cluster.tar'), new Uint8Array([1, 2, 3]));
    expect(await readSnapshot(dir)).toEqual({ miss: 'does not match its checksum' });
  });

  it('gives the same demo data, indexes and sequences as a cluster built from scratch on the same day', {
    timeout: 300_000,
  }, async () => {
    const dir = path.join(scratch, 'same-data');
    await writeSnapshot(dir);
    const now = new Date();

    const scratchBuilt = await openDatabase({});
    let reference: Awaited<ReturnType<typeof contents>>;
    try {
      await scratchBuilt.migrate();
      await seedDemo(scratchBuilt.db, { now });
      await buildDailyAggregate(scratchBuilt.db, { now });
      reference = await contents(scratchBuilt);
    } finally {
      await scratchBuilt.close();
    }

    // Started as `npm start` starts it; a cluster built at start keeps its files in memory (only one loaded
    // from the day's cache goes on disk), so it leaves no data directory behind.
    const started = await openEmbeddedDemo({ now, cacheDir: null, snapshotDir: dir, filesUnder: scratch });
    try {
      expect(started.source).toBe('built');
      expect(started.snapshot).toBe('used');
      const got = await contents(started.database);
      expect(got.tables).toEqual(reference.tables);
      expect(got.constraints).toEqual(reference.constraints);
      expect(reference.constraints.filter((c) => c.definition.startsWith('FOREIGN KEY')).length).toBeGreaterThan(10);
      expect(got.sequences).toEqual(reference.sequences);
      expect(reference.tables.reviews?.rows).toBeGreaterThan(1000);
      // Before listening, every index but keyword search's GIN indexes; a keyword search meanwhile reads
      // the brand's rows by the same rule, so it finds what the indexes would.
      const isSearchIndex = (index: { definition: string }) => index.definition.includes(' USING gin ');
      expect(reference.indexes.filter(isSearchIndex).length).toBeGreaterThanOrEqual(3);
      expect(got.indexes).toEqual(reference.indexes.filter((index) => !isSearchIndex(index)));
      // The list's own keyword rule, each review against its own brand's grams.
      const keywordHits = sql`SELECT count(*)::int AS n FROM ${reviews}
        WHERE ${matchesKeyword('맛', { brand: reviews.brandId, keyword: '맛', pattern: likePattern('맛') })}`;
      const [hitsBefore] = await started.database.rows<{ n: number }>(keywordHits);
      expect(hitsBefore?.n).toBeGreaterThan(0);
      // After listening: the indexes, then the statistics of their expressions.
      const expressionStats = sql`SELECT count(*)::int AS n FROM pg_stats WHERE tablename = 'reviews_brand_grams_idx'`;
      expect(await started.database.rows(expressionStats)).toEqual([{ n: 0 }]);
      await started.complete();
      expect((await contents(started.database)).indexes).toEqual(reference.indexes);
      expect(await started.database.rows(expressionStats)).toEqual([{ n: 1 }]);
      expect(await started.database.rows(keywordHits)).toEqual([hitsBefore]);
      expect((await readdir(scratch)).filter((name) => name.startsWith('data-'))).toEqual([]);
    } finally {
      await started.database.close();
    }
    expect((await readdir(scratch)).filter((name) => name.startsWith('data-'))).toEqual([]);

    // Without a snapshot the same start builds the cluster from initdb, with the same data.
    const withoutSnapshot = await openEmbeddedDemo({ now, cacheDir: null, snapshotDir: path.join(scratch, 'none') });
    try {
      expect(withoutSnapshot.snapshot).toBe('none');
      expect((await contents(withoutSnapshot.database)).tables).toEqual(reference.tables);
    } finally {
      await withoutSnapshot.database.close();
    }
  });
});
