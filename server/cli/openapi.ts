import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../http/openapi';
import { runCli } from './database';

const USAGE = `usage: node dist/server/cli/openapi.js [FILE]   (npm run openapi)

Writes the OpenAPI document generated from the router to FILE (openapi.json by default): the committed
copy partners and client generators read without running the server; test/openapi.test.ts fails when the
router changed and this was not run again.`;

runCli(USAGE, {}, async ({ positionals }) => {
  const file = positionals[0] ?? 'openapi.json';
  writeFileSync(file, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
  process.stdout.write(`wrote ${file}\n`);
});
