import { expireFeedCursors } from '../../db/queries/review-changes';
import { runCli, UsageError, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run feed -- <command>   (on DATABASE_URL)

  expire-cursors
      Starts a new history of the review change feed: every cursor issued so far answers 410
      PARTNER_API_CURSOR_EXPIRED, and partners walk their brands again without a cursor. Run it after
      anything that rewinds the database in place: a base-backup restore, a point-in-time recovery, a
      failover that lost transactions (docs/operations.md § The review change feed).`;

runCli(USAGE, {}, async ({ positionals }) => {
  const [command] = positionals;
  if (command !== 'expire-cursors')
    throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
  await withConfiguredDatabase(async (database) => {
    await expireFeedCursors(database.db);
    process.stdout.write('every review change feed cursor issued so far now answers 410\n');
  });
});
