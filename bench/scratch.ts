import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import postgres from 'postgres';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { seedDemo } from '../db/seed/demo';
import { seedLarge } from '../db/seed/large';

// What the benches that start servers share: their child processes and scratch databases, stopped and
// dropped on every exit path, Ctrl-C included, and the seeded database they measure.

/** The bench's clean-up: each child leads its own process group (detached), so `npm start`'s node goes with it. */
export function cleanUpOnExit() {
  const children = new Set<ChildProcess>();
  const cleanups: (() => Promise<void>)[] = [];
  const killGroup = (child: ChildProcess) => {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
    }
    children.delete(child);
  };
  const cleanUp = async () => {
    for (const child of children) killGroup(child);
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\n${signal}: stopping children, dropping scratch databases\n`);
      cleanUp().finally(() => process.exit(130));
    });
  }
  return { children, cleanups, cleanUp, killGroup };
}

/**
 * The database a bench measures, on the server of `adminUrl`: `reuse`d as an earlier run seeded it (with
 * the migrations added since), or created as `name`, seeded with the demo data and the large brand of
 * `reviews` reviews, and dropped at exit unless `keep`.
 */
export async function seededDatabase(options: {
  adminUrl: string;
  name: string;
  reuse?: string | undefined;
  keep?: boolean | undefined;
  reviews: number;
  now: Date;
  cleanups: (() => Promise<void>)[];
}): Promise<{ dbName: string; databaseUrl: string; database: DatabaseHandle }> {
  const { adminUrl, reuse, keep, cleanups, now } = options;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  cleanups.push(() => admin.end());
  const dbName = reuse ?? options.name;
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  const databaseUrl = dbUrl.toString();
  if (!reuse) {
    await admin.unsafe(`CREATE DATABASE ${dbName}`);
    if (!keep) cleanups.push(() => admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).then(() => {}));
  }
  const database = await openDatabase({ url: databaseUrl, maxConnections: 2 });
  cleanups.push(() => database.close());
  await database.migrate();
  if (!reuse) {
    await seedDemo(database.db, { now });
    const seeding = Date.now();
    await seedLarge(database.db, {
      reviews: options.reviews,
      now,
      onProgress: (done, total) => process.stdout.write(`\rseeding ${done}/${total} reviews`),
    });
    process.stdout.write(`\nseeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s\n`);
  }
  return { dbName, databaseUrl, database };
}

const PGBENCH = ['/usr/lib/postgresql/15/bin/pgbench', '/usr/bin/pgbench'];

/**
 * pgbench with `args` against `databaseUrl`, as a child of its own process group in `children` (so the
 * bench's clean-up stops it): the transactions a second it printed. `options` goes to PGOPTIONS.
 */
export function pgbenchTps(
  databaseUrl: string,
  args: string[],
  children: Set<ChildProcess>,
  options = '',
): Promise<number> {
  const url = new URL(databaseUrl);
  const binary = PGBENCH.find((candidate) => existsSync(candidate)) ?? 'pgbench';
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['-n', '-M', 'prepared', ...args], {
      env: {
        ...process.env,
        PGHOST: url.hostname,
        PGPORT: url.port || '5432',
        PGUSER: decodeURIComponent(url.username) || 'postgres',
        PGPASSWORD: decodeURIComponent(url.password),
        PGDATABASE: url.pathname.slice(1),
        PGOPTIONS: options,
      },
      detached: true,
    });
    children.add(child);
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
    });
    child.stderr.on('data', (chunk) => {
      text += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      children.delete(child);
      const tps = Number(/tps = ([\d.]+)/.exec(text)?.[1]);
      if (code === 0 && tps) resolve(tps);
      else reject(new Error(`pgbench exited ${code}: ${text.slice(-500)}`));
    });
  });
}

/** A free TCP port of the loopback interface. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const SERVER = path.resolve(import.meta.dirname, '../dist/server/main.js');

/**
 * The built server on `databaseUrl`, as production runs it, at the default log level (the access log is
 * part of what a call costs), the limiter never refusing; `env` adds to that. Resolves once /healthz answers.
 */
export async function startBuiltServer(
  databaseUrl: string,
  { children, killGroup }: Pick<ReturnType<typeof cleanUpOnExit>, 'children' | 'killGroup'>,
  env: Record<string, string> = {},
) {
  if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: npm run build first`);
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: '',
      REDIS_URL: '',
      ...env,
    },
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error('server exited before answering');
    if (Date.now() > until) throw new Error(`no answer from ${base} within 60 s`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { base, group: child.pid as number, stop: () => killGroup(child) };
}
