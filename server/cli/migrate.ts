import { openConfiguredDatabase, runCli } from './database';

// npm run db:migrate: applies the committed migrations (db/migrations) to DATABASE_URL, idempotently.
runCli(async () => {
  const database = await openConfiguredDatabase();
  try {
    await database.migrate();
    process.stdout.write('migrations applied\n');
  } finally {
    await database.close();
  }
});
