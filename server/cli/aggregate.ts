import { buildDailyAggregate } from '../../db/aggregate';
import { openConfiguredDatabase, runCli } from './database';

// npm run aggregate: rebuilds the daily aggregate of D-6 (every KST day before today) in DATABASE_URL.
// Safe beside running servers: the job's advisory lock makes concurrent runs wait for each other.
runCli(async () => {
  const database = await openConfiguredDatabase();
  try {
    const started = Date.now();
    const result = await buildDailyAggregate(database.db, { now: new Date() });
    process.stdout.write(
      `aggregate built through ${result.throughDay}: ${result.reviewRows} review-stats rows, ` +
        `${result.salesRows} sales rows in ${Date.now() - started} ms\n`,
    );
  } finally {
    await database.close();
  }
});
