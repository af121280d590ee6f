import { buildDailyAggregate } from '../../db/aggregate';
import { runCli, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run aggregate [-- --full] [--verbose]

Builds the daily aggregate (D-6: every KST day before today) in DATABASE_URL: incrementally from the change
log when it can, every row anew with --full. Safe beside running servers: the job's advisory lock makes
concurrent runs wait for each other.`;

runCli(USAGE, { full: { type: 'boolean', default: false } }, async ({ values }) => {
  await withConfiguredDatabase(async (database) => {
    const started = Date.now();
    const result = await buildDailyAggregate(database.db, { now: new Date(), full: values.full });
    process.stdout.write(
      `aggregate built (${result.kind}) through ${result.throughDay}: ${result.writtenRows} rows written` +
        (result.kind === 'full' ? ` (${result.reviewRows} review-stats rows, ${result.salesRows} sales rows)` : '') +
        ` in ${Date.now() - started} ms\n`,
    );
  });
});
