import { readFileSync } from 'node:fs';
import { makeDemoChanges } from '../../db/seed/demo-changes';
import { parseConfig } from '../config';
import { demoPidFile } from '../demo';
import { runCli, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run demo:changes

Makes one change of each kind the review change feed sends (a late reply, a negative-review alert, a new
review, a new critical review of 1 star, a removed review) in the demo brand chicken-house, so a walk of
GET /partner/v1/brands/chicken-house/review-changes started before shows them, and the demo's webhook
delivers them to npm run demo:webhook-receiver. With DATABASE_URL, in that
database (loaded with npm run db:seed); without it, in the embedded demo of \`npm start\` on PORT (default
3000), which logs the review ids.`;

runCli(USAGE, {}, async () => {
  const config = parseConfig(process.env);
  if (config.DATABASE_URL) {
    await withConfiguredDatabase(async (database) => {
      process.stdout.write(`${JSON.stringify(await makeDemoChanges(database.db))}\n`);
    });
    return;
  }
  const file = demoPidFile(config.PORT);
  const pid = Number(readFileSync(file, { encoding: 'utf8', flag: 'r' }));
  // A pid file left by a demo that died must not signal whatever process has its number now.
  const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  const server = ['dist/server/main.js', 'server/main.ts'].some((entry) => command.includes(entry));
  if (!server) throw new Error(`no demo server on port ${config.PORT} (${file} is stale)`);
  process.kill(pid, 'SIGUSR2');
  process.stdout.write(
    `asked the demo server on port ${config.PORT} (pid ${pid}); its log lists the reviews changed\n`,
  );
});
