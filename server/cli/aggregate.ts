import { parseArgs } from 'node:util';
import { buildDailyAggregate } from '../../db/aggregate';
import { openConfiguredDatabase, runCli } from './database';

// npm run aggregate [-- --full]: builds the daily aggregate of D-6 (every KST day before today) in
// DATABASE_URL: incrementally from the change log when it can, every row anew with --full.
// Safe beside running servers: the job's advisory lock makes concurrent runs wait for each other.
runCli(async () => {
  const { values } = parseArgs({ options: { full: { type: 'boolean', default: false } } });
  const database = await openConfiguredDatabase();
  try {
    const started = Date.now();
    const result = await buildDailyAggregate(database.db, { now: new Date(), full: values.full });
    process.stdout.write(
      `aggregate built (${result.kind}) through ${result.throughDay}: ${result.writtenRows} rows written` +
        (result.kind === 'full' ? ` (${result.reviewRows} review-stats rows, ${result.salesRows} sales rows)` : '') +
        ` in ${Date.now() - started} ms\n`,
    );
  } finally {
    await database.close();
  }
});
