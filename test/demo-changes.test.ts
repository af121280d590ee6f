import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviews } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { makeDemoChanges } from '../db/seed/demo-changes';
import { openTestDatabase } from './support/database';
import { built, type LoggedProcess, listeningLine, spawnLogged } from './support/server-process';

// `npm run demo:changes` (partner guide § Keeping a copy in sync): it changes reviews for someone watching
// the change feed, never those the README and the guides use as examples, and prints which it changed.

const ROOT = path.resolve(import.meta.dirname, '..');

/** Every demo review_id (R + 9 digits) the repository's Markdown names, read from the files themselves. */
const DOCUMENTED = [
  ...new Set(
    execFileSync('git', ['ls-files', '-z', '*.md'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean)
      .flatMap((file) => [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/\bR\d{9}\b/g)].map((m) => m[0])),
  ),
];

describe('the demo changes', () => {
  it('find the review ids the README and the guides name', () => {
    expect(DOCUMENTED).toContain('R000000001');
  });

  it('leave every documented review as it was, run after run', async () => {
    const database = await openTestDatabase();
    const documented = () =>
      database.db.select().from(reviews).where(inArray(reviews.reviewCode, DOCUMENTED)).orderBy(reviews.reviewCode);
    const before = await documented();
    expect(before.map((review) => review.reviewCode)).toContain('R000000001');
    for (let run = 0; run < 3; run++) {
      const made = await makeDemoChanges(database.db);
      expect(DOCUMENTED).not.toContain(made.replied);
      expect(DOCUMENTED).not.toContain(made.alerted);
      expect(DOCUMENTED).not.toContain(made.removed);
    }
    expect(await documented()).toEqual(before);
  });
});

describe('npm run demo:changes against the embedded demo (no DATABASE_URL)', () => {
  let server: LoggedProcess | undefined;
  const { DATABASE_URL: _, ...inherited } = process.env;
  const env = { ...inherited, LOG_LEVEL: 'info', HOST: '127.0.0.1' };

  beforeAll(() => {
    server = spawnLogged(process.execPath, [built('server/main.ts')], {
      cwd: ROOT,
      env: { ...env, PORT: '0' },
    });
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
  });

  it('prints the review ids it changed', { timeout: 120_000 }, async () => {
    const base = String((await listeningLine(server as LoggedProcess)).base);
    const port = new URL(base).port;
    const { stdout } = await promisify(execFile)(process.execPath, [built('server/cli/demo-changes.ts')], {
      cwd: ROOT,
      env: { ...env, PORT: port },
    });
    const printed = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(printed).sort()).toEqual(['added', 'alerted', 'critical', 'removed', 'replied']);
    for (const id of Object.values(printed)) expect(id).toMatch(/^R\d{9}$/);
    // The ids are the server's: the added review is there, the removed one is gone.
    const status = (id: string | undefined) =>
      fetch(`${base}/partner/v1/brands/chicken-house/reviews/${id}`, {
        headers: { 'x-partner-api-key': DEMO_KEYS.active },
      }).then((response) => response.status);
    expect([await status(printed.added), await status(printed.removed)]).toEqual([200, 404]);
  });

  it('says in one line that no demo server listens on a port', async () => {
    const answer = await promisify(execFile)(process.execPath, [built('server/cli/demo-changes.ts')], {
      cwd: ROOT,
      env: { ...env, PORT: '1' },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(answer).toMatchObject({ code: 1, stderr: 'no demo server on port 1 (npm start without DATABASE_URL)\n' });
  });
});
