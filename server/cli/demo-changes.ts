import { connect } from 'node:net';
import { text } from 'node:stream/consumers';
import { type DemoChanges, makeDemoChanges } from '../../db/seed/demo-changes';
import { parseConfig } from '../config';
import { demoChangesSocket } from '../demo';
import { runCli, withConfiguredDatabase } from './database';

const USAGE = `usage: npm run demo:changes

Makes one change of each kind the review change feed sends (a late reply, a negative-review alert, a new
review, a new critical review of 1 star, a removed review) among the newest reviews of the demo brand
chicken-house, so a walk of GET /partner/v1/brands/chicken-house/review-changes started before shows them,
the demo's webhook delivers them to npm run demo:webhook-receiver, and prints their review ids. With
DATABASE_URL, in that database (loaded with npm run db:seed); without it, in the embedded demo of
\`npm start\` on PORT (default 3000).`;

/** Asks the embedded demo on `port` to make the changes: only that process can write its database. */
async function askDemoServer(port: number): Promise<DemoChanges> {
  const socket = connect(demoChangesSocket(port));
  const answer = await text(socket).catch((error: NodeJS.ErrnoException) => {
    // No socket, or one a demo that died left behind.
    if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED')
      throw new Error(`no demo server on port ${port} (npm start without DATABASE_URL)`);
    throw error;
  });
  const { changes, error } = JSON.parse(answer) as { changes?: DemoChanges; error?: string };
  if (!changes) throw new Error(`the demo server on port ${port} made no changes: ${error}`);
  return changes;
}

runCli(USAGE, {}, async () => {
  const config = parseConfig(process.env);
  let changes: DemoChanges | undefined;
  if (config.DATABASE_URL)
    await withConfiguredDatabase(async (database) => {
      changes = await makeDemoChanges(database.db);
    });
  else changes = await askDemoServer(config.PORT);
  process.stdout.write(`${JSON.stringify(changes)}\n`);
});
