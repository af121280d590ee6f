import { runCli, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run db:migrate [-- --verbose]

Applies the committed migrations (db/migrations) to DATABASE_URL, idempotently: a migrated database is left
as it is. --verbose prints the stack of a failure.`;

runCli(USAGE, {}, async () => {
  await withConfiguredDatabase(async (database) => {
    await database.migrate();
    process.stdout.write('migrations applied\n');
  });
});
