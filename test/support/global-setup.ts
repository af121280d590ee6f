import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { buildDailyAggregate } from '../../db/aggregate';
import { openDatabase, pgliteOf } from '../../db/client';
import { seedDemo } from '../../db/seed/demo';
import { adminSql, templateName } from './postgres';

/**
 * Once per run: migrate, seed and aggregate one template, with the run's fixed "now", so every test file
 * starts from a private copy in milliseconds instead of paying migrate + seed each time.
 * - PGlite (default): dumped to a tarball each file loads (loadDataDir), uncompressed: a file loads it
 *   in about half the time it takes to gunzip first.
 * - PostgreSQL (TEST_DATABASE_URL): a template database each file clones with CREATE DATABASE … TEMPLATE.
 */
export default async function setup(project: TestProject) {
  const now = new Date();
  project.provide('now', now.toISOString());
  const url = process.env.TEST_DATABASE_URL || undefined;
  const [, teardown] = await Promise.all([buildDist(), template(project, now, url)]);
  return teardown;
}

/**
 * The compiled server and commands (what `npm start`, `npm run <command>`, the container and many files
 * start) built from the source under test, once, before any file runs: a build empties dist/ of its
 * modules, so one run while a file starts a process from it would pull the files from under it.
 */
async function buildDist() {
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  await promisify(execFile)('npm', ['run', '-s', 'build'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { ...process.env, PATH },
  });
}

async function template(project: TestProject, now: Date, url: string | undefined) {
  if (url) {
    const admin = adminSql(url);
    const name = templateName();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const handle = await openDatabase({ url: withDatabase(url, name), maxConnections: 1 });
    await handle.migrate();
    await seedDemo(handle.db, { now });
    await buildDailyAggregate(handle.db, { now });
    await handle.close();
    project.provide('postgresTemplate', { url, name });
    project.provide('pgliteDump', '');
    return async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    };
  }

  const handle = await openDatabase({});
  await handle.migrate();
  await seedDemo(handle.db, { now });
  await buildDailyAggregate(handle.db, { now });
  const dump = await pgliteOf(handle).dumpDataDir('none');
  await handle.close();
  const dir = await mkdtemp(path.join(tmpdir(), 'partner-api-test-'));
  const file = path.join(dir, 'template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteDump', file);
  project.provide('postgresTemplate', null);
  return () => rm(dir, { recursive: true, force: true });
}

export function withDatabase(url: string, database: string) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    now: string;
    pgliteDump: string;
    postgresTemplate: { url: string; name: string } | null;
  }
}
