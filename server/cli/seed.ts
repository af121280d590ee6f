import { sql } from 'drizzle-orm';
import { seedDemo } from '../../db/seed/demo';
import { seedLarge } from '../../db/seed/large';
import { runCli, UsageError, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run db:seed [-- --reviews N] [--skip-demo] [--verbose]

Loads the demo data (D-3: demo partners, brands, keys) into an empty, migrated DATABASE_URL; with --reviews,
also the large benchmark brand (bench-brand) with N reviews, showing progress; --skip-demo loads only that.`;

const OPTIONS = { reviews: { type: 'string' }, 'skip-demo': { type: 'boolean' } } as const;

runCli(USAGE, OPTIONS, async ({ values }) => {
  const reviews = values.reviews === undefined ? undefined : Number(values.reviews);
  if (reviews !== undefined && !(Number.isInteger(reviews) && reviews > 0))
    throw new UsageError('--reviews takes a positive whole number');
  await withConfiguredDatabase(async (database) => {
    if (!values['skip-demo']) {
      const summary = await seedDemo(database.db);
      // The migrations analyzed these tables empty, and autovacuum may be off or a minute away.
      await database.db.execute(sql`ANALYZE`);
      process.stdout.write(`demo data: ${JSON.stringify(summary)}\n`);
    }
    if (reviews) {
      const started = Date.now();
      const result = await seedLarge(database.db, { reviews, onProgress: progressBar });
      const seconds = (Date.now() - started) / 1000;
      process.stdout.write(`\n${result.brandCode}: ${result.reviews} reviews in ${seconds.toFixed(1)} s\n`);
    }
  });
});

function progressBar(done: number, total: number) {
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stdout.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} reviews`);
}
