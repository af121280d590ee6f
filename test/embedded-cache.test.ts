import { appendFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCacheKey, embeddedDataDir, openEmbeddedDemo, readDemoCache, writeDemoCache } from '../db/embedded';

// D-1: `npm start` loads the demo cluster from a cache on disk. It must never serve demo data another
// build would not give: the key follows the KST day (D-3: the data is relative to today in KST) and every
// file that builds it (db/: migrations, schema, seed, aggregate, PGlite settings); an entry that does not
// match its key and checksum is a miss.
const DB_DIR = path.resolve(import.meta.dirname, '../db');
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'partner-api-demo-cache-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('demo cache key', () => {
  it('is the same all KST day and changes at KST midnight (15:00Z)', () => {
    const morning = demoCacheKey(new Date('2026-11-21T15:00:00Z'));
    expect(demoCacheKey(new Date('2026-11-22T14:59:59Z'))).toBe(morning);
    expect(morning.startsWith('2026-11-22-')).toBe(true);
    expect(demoCacheKey(new Date('2026-11-21T14:59:59Z'))).not.toBe(morning);
  });

  it('changes with a migration or the seed code, not with the place of db/', async () => {
    const now = new Date('2026-11-21T03:00:00Z');
    const copy = path.join(scratch, 'db-copy');
    await cp(DB_DIR, copy, { recursive: true });
    expect(demoCacheKey(now, copy)).toBe(demoCacheKey(now));

    const migrations = (await readdir(path.join(copy, 'migrations'))).filter((name) => name.endsWith('.sql'));
    const last = path.join(copy, 'migrations', migrations.sort().at(-1) ?? '');
    await appendFile(last, '\n-- changed\n');
    const afterMigration = demoCacheKey(now, copy);
    expect(afterMigration).not.toBe(demoCacheKey(now));

    await appendFile(path.join(copy, 'seed', 'demo.ts'), '\n// changed\n');
    expect(demoCacheKey(now, copy)).not.toBe(afterMigration);
  });
});

describe('demo cache entries', () => {
  const meta = {
    summary: { partners: 3, brands: ['a'], shops: 1, reviews: 2, salesSnapshots: 3 },
    aggregate: { throughDay: '2026-11-20', kind: 'full' as const, writtenRows: 2, reviewRows: 1, salesRows: 1 },
  };

  it('reads back what was written, and nothing for another key', async () => {
    const dir = path.join(scratch, 'entries');
    await writeDemoCache(dir, { key: 'k1', ...meta }, new Uint8Array([1, 2, 3]));
    const read = await readDemoCache(dir, 'k1');
    expect('meta' in read && [...read.tarball]).toEqual([1, 2, 3]);
    expect(await readDemoCache(dir, 'k2')).toEqual({ miss: 'none' });
  });

  it('is a miss when the tarball does not match its checksum', async () => {
    const dir = path.join(scratch, 'torn');
    await writeDemoCache(dir, { key: 'k1', ...meta }, new Uint8Array([1, 2, 3]));
    await writeFile(path.join(dir, 'demo-k1.tar'), new Uint8Array([1, 2]));
    expect(await readDemoCache(dir, 'k1')).toEqual({ miss: 'does not match its key or checksum' });
  });

  it('drops the entries of other keys when a new one is written', async () => {
    const dir = path.join(scratch, 'rotate');
    await writeDemoCache(dir, { key: '2026-11-21-aaaa', ...meta }, new Uint8Array([1]));
    await writeDemoCache(dir, { key: '2026-11-22-aaaa', ...meta }, new Uint8Array([2]));
    expect((await readdir(dir)).sort()).toEqual(['demo-2026-11-22-aaaa.json', 'demo-2026-11-22-aaaa.tar']);
  });
});

describe('the embedded cluster’s data directories', () => {
  it('are one per process; those of processes that no longer run are removed, the others kept', async () => {
    const parent = path.join(scratch, 'data-dirs');
    // pid 1 always runs; a pid above the kernel's maximum never does.
    await mkdir(path.join(parent, 'data-1-alive'), { recursive: true });
    await mkdir(path.join(parent, 'data-99999999-gone'), { recursive: true });
    const own = await embeddedDataDir(parent);
    expect((await readdir(parent)).sort()).toEqual(['data-1-alive', path.basename(own.dir)].sort());
    expect(path.basename(own.dir)).toMatch(new RegExp(`^data-${process.pid}-`));
    await own.remove();
    expect(await readdir(parent)).toEqual(['data-1-alive']);
  });
});

describe('embedded demo from the cache', () => {
  it('is built once, then loaded with the same data', { timeout: 180_000 }, async () => {
    const dir = path.join(scratch, 'roundtrip');
    const now = new Date();
    const counts = async (demo: Awaited<ReturnType<typeof openEmbeddedDemo>>) =>
      demo.database.rows(sql`
        SELECT (SELECT count(*)::int FROM reviews) AS reviews,
               (SELECT count(*)::int FROM review_stats_daily) AS stats,
               (SELECT count(*)::int FROM api_keys) AS keys,
               (SELECT max(review_code) FROM reviews) AS last_code`);

    const built = await openEmbeddedDemo({ now, cacheDir: dir });
    expect(built.source).toBe('built');
    const builtCounts = await counts(built);
    await built.complete();
    await built.database.close();

    // Loaded as `npm start` loads it: its files on disk in a directory of this process, gone once closed.
    const loaded = await openEmbeddedDemo({ now, cacheDir: dir, filesUnder: dir });
    try {
      expect(loaded.source).toBe('hit');
      expect(loaded.summary).toEqual(built.summary);
      expect(loaded.aggregate).toEqual(built.aggregate);
      expect(await counts(loaded)).toEqual(builtCounts);
      const [files] = (await readdir(dir)).filter((name) => name.startsWith(`data-${process.pid}-`));
      expect(await readdir(path.join(dir, files ?? 'none'))).toContain('PG_VERSION');
    } finally {
      await loaded.database.close();
    }
    expect((await readdir(dir)).filter((name) => name.startsWith('data-'))).toEqual([]);
    // The entry names its day; a sidecar that names another key is not trusted.
    const [metaFile] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    const sidecar = path.join(dir, metaFile ?? '');
    const parsed = JSON.parse(await readFile(sidecar, 'utf8')) as { key: string };
    await writeFile(sidecar, JSON.stringify({ ...parsed, key: 'another' }));
    expect(await readDemoCache(dir, parsed.key)).toEqual({ miss: 'does not match its key or checksum' });
  });
});
