import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { DrizzleQueryError } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeDatabaseFailure } from '../db/failure';
import { withDashValues } from '../server/cli/database';
import { DRIVER, openTestDatabase } from './support/database';
import { built } from './support/server-process';

// The commands an operator runs (server/cli, and the server itself): `--help` on each, which does nothing
// else; a failure of the database in one line naming what, where and which database (db/failure.ts), the
// stack on --verbose.

const root = path.resolve(import.meta.dirname, '..');
/** Nothing listens on port 1: connecting is refused at once. */
const CLOSED = 'postgres://operator:secret@127.0.0.1:1/reports';
/** Every command of server/cli (each file that runs `runCli`), and the server itself (`npm start`). */
const COMMANDS = [
  ...readdirSync(path.join(root, 'server/cli'))
    .filter(
      (file) => file.endsWith('.ts') && readFileSync(path.join(root, 'server/cli', file), 'utf8').includes('runCli('),
    )
    .map((file) => file.slice(0, -'.ts'.length)),
  'main',
];

async function run(command: string, args: string[], env: Record<string, string> = {}) {
  const script = command === 'main' ? 'server/main.ts' : `server/cli/${command}.ts`;
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [built(script), ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'info', DATABASE_URL: CLOSED, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('every command', () => {
  it('are found: the commands of server/cli and the server', () => {
    expect(COMMANDS).toEqual(expect.arrayContaining(['migrate', 'keys', 'demo-changes', 'main']));
  });

  it.each(COMMANDS)('%s: --help prints the usage and does nothing else', async (command) => {
    // The database is unreachable: a command that did its work would fail, and a server would stay up.
    const answer = await run(command, ['--help'], { PORT: '0' });
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    expect(answer.stdout).toMatch(/^usage: /);
  });

  it('refuses an unknown option in one line, exit status 2, before touching the database', async () => {
    const answer = await run('migrate', ['--bogus']);
    expect(answer.code).toBe(2);
    expect(answer.stderr).toMatch(/^Unknown option '--bogus'.* \(--help for usage\)\n$/s);
  });

  it('names the cause of a database failure in one line, without the password; the stack with --verbose', async () => {
    const answer = await run('migrate', []);
    expect(answer.code).toBe(1);
    expect(answer.stderr).toBe(
      'cannot connect to PostgreSQL at 127.0.0.1:1 (database "reports"): connection refused (ECONNREFUSED)\n',
    );
    const verbose = await run('migrate', ['--verbose']);
    expect(verbose.stderr.split('\n')[0]).toBe(answer.stderr.trim());
    expect(verbose.stderr).toContain('Failed query');
    expect(verbose.stderr).not.toContain('secret');
  });
});

describe.skipIf(DRIVER !== 'postgres')('a partner, brand or key that already exists (PostgreSQL)', () => {
  let url: string;
  beforeAll(async () => {
    url = (await openTestDatabase()).url ?? '';
  });

  it.each([
    [['partners', 'create', 'Demo Foods'], 'a partner named Demo Foods already exists (npm run partners -- list)'],
    [
      ['brands', 'create', '--partner', 'Other Eats', '--code', 'chicken-house', '--name', 'Again'],
      'a brand with code chicken-house already exists (npm run brands -- list)',
    ],
  ])('%j is refused in one plain line, exit status 1', async ([command, ...args], line) => {
    const answer = await run(command as string, args, { DATABASE_URL: url });
    expect(answer).toMatchObject({ code: 1, stdout: '', stderr: `${line}\n` });
  });
});

describe('an option value that begins with a dash (a feed cursor is base64url)', () => {
  const options = {
    cursor: { type: 'string' },
    brand: { type: 'string', multiple: true },
    verbose: { type: 'boolean' },
  } as const;

  it('is read as the value, joined to its flag', () => {
    expect(withDashValues(['replay', 'wh_1', '--cursor', '-Xy9_', '--brand', '-b'], options)).toEqual([
      'replay',
      'wh_1',
      '--cursor=-Xy9_',
      '--brand=-b',
    ]);
  });

  it('leaves values without a dash, a flag of no value, and a long option in the value place as they are', () => {
    const argv = ['--cursor', 'Xy9', '--verbose', '-h', '--cursor', '--brand', 'b'];
    expect(withDashValues(argv, options)).toEqual(argv);
  });
});

describe('npm start', () => {
  it('names the cause of a database failure in one line too', async () => {
    const answer = await run('main', [], { PORT: '0' });
    expect(answer.code).toBe(1);
    expect(answer.stderr).toBe(
      'failed to start: cannot connect to PostgreSQL at 127.0.0.1:1 (database "reports"): connection refused (ECONNREFUSED)\n',
    );
  });
});

describe('a database failure in one line', () => {
  const URL = 'postgres://u:p@db.internal:6432/reports?sslmode=require';
  /** A query failure as drizzle reports it: the statement, with postgres.js's error as its cause. */
  const failedQuery = (cause: object) =>
    new DrizzleQueryError('select 1', [], Object.assign(new Error((cause as { message: string }).message), cause));

  it('quotes the server: database missing, login refused, a relation missing (with the remedy)', () => {
    const answer = (code: string, message: string) =>
      describeDatabaseFailure(failedQuery({ code, message, severity: 'FATAL' }), URL);
    expect(answer('3D000', 'database "reports" does not exist')).toBe(
      'cannot connect to PostgreSQL at db.internal:6432 (database "reports"): database "reports" does not exist (3D000)',
    );
    expect(answer('28P01', 'password authentication failed for user "u"')).toMatch(/^cannot connect to .*\(28P01\)$/);
    expect(answer('42P01', 'relation "api_keys" does not exist')).toBe(
      'PostgreSQL at db.internal:6432 (database "reports") refused a statement: relation "api_keys" does not exist ' +
        '(42P01); is the database migrated (npm run db:migrate)?',
    );
  });

  it('says which connection step failed: refused, no such host, timed out, TLS', () => {
    expect(
      describeDatabaseFailure(failedQuery({ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND db.internal' }), URL),
    ).toBe('cannot connect to PostgreSQL at db.internal:6432 (database "reports"): no such host (ENOTFOUND)');
    expect(
      describeDatabaseFailure(
        failedQuery({ code: 'CONNECT_TIMEOUT', message: 'write CONNECT_TIMEOUT', address: '10.0.0.5', port: 5432 }),
        URL,
      ),
    ).toBe(
      'cannot connect to PostgreSQL at 10.0.0.5:5432 (database "reports"): timed out connecting (CONNECT_TIMEOUT)',
    );
    expect(
      describeDatabaseFailure(
        failedQuery({
          code: 'ECONNRESET',
          message: 'Client network socket disconnected before secure TLS connection was established',
        }),
        URL,
      ),
    ).toMatch(/the TLS handshake failed: the server does not support SSL, which the URL requires/);
  });

  it('leaves errors that are not the database alone', () => {
    expect(describeDatabaseFailure(new Error('no partner named X'), URL)).toBeUndefined();
    const usage = Object.assign(new TypeError("Unknown option '--x'"), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
    expect(describeDatabaseFailure(usage, URL)).toBeUndefined();
    // A socket error outside a query: another service (Redis) or a file, not the database.
    const redis = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    expect(describeDatabaseFailure(redis, URL)).toBeUndefined();
    expect(describeDatabaseFailure(Object.assign(new Error('no such file'), { code: 'ENOENT' }), URL)).toBeUndefined();
  });
});
