import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../openapi';
import { runCli } from './database';

// npm run openapi: writes the committed copy of the OpenAPI document (openapi.json at the root), which
// partners and client generators read without running the server; test/openapi.test.ts fails when the
// router changed and this was not run again.
runCli(async () => {
  const file = process.argv[2] ?? 'openapi.json';
  writeFileSync(file, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
  process.stdout.write(`wrote ${file}\n`);
});
