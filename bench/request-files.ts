import { execFileSync, spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import postgres from 'postgres';

// npm run bench:files [-- --requests N]: the project files one warm partner call passes. It creates a scratch
// PostgreSQL database, migrates, seeds the demo data and builds the daily aggregate with the project's own
// CLIs, then starts the service in a child process (`node --import tsx server/main.ts`, from the TypeScript
// source) under V8's precise coverage. After warm-up calls it takes the coverage once (which resets the
// call counts), sends ONE call, and takes it again: a module counts if any of its functions ran during that
// call. This is done for N calls, one at a time; a module is listed if it ran in every one of them, so a
// timer that fires during one call (a cache refresh, the log flush) does not count. The database is dropped
// at the end. DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).

const CALL = '/partner/v1/brands/chicken-house/reviews?platform=BAEMIN&limit=21';
const KEY = 'pk_test_demo_active';
const WARM_UP_CALLS = 30;
const ROOT = path.resolve(import.meta.dirname, '..');
/** The service's own modules: server/, routers/, db/ (.ts), never node_modules. */
const PROJECT_MODULE = /^(server|routers|db)\/.*\.ts$/;

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '3' },
    /** Internal: this process is the service under coverage. */
    measure: { type: 'boolean', default: false },
  },
});

type Report = { call: string; requests: number; files: string[]; perRequest: string[][] };

if (args.measure) await measure();
else await orchestrate();

async function orchestrate() {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `partner_files_${process.pid}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  try {
    const env = { ...process.env, DATABASE_URL: databaseUrl };
    const tsx = path.join(ROOT, 'node_modules/tsx/dist/cli.mjs');
    for (const cli of ['migrate', 'seed', 'aggregate'])
      execFileSync(process.execPath, [tsx, `server/cli/${cli}.ts`], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    const report = await new Promise<Report>((resolve, reject) => {
      // The service's stdout (its access log) is discarded; the report comes back over IPC.
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), '--measure', '--requests', args.requests],
        {
          cwd: ROOT,
          env: {
            ...env,
            HOST: '127.0.0.1',
            REDIS_URL: '',
            UPSTASH_REDIS_REST_URL: '',
            // High enough that no call of the run is refused: the limiter still decides each one.
            RATE_LIMIT_PER_MINUTE: '1000000',
          },
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        },
      );
      child.once('message', (message) => {
        resolve(message as Report);
        child.kill('SIGKILL');
      });
      child.once('exit', (code) => reject(new Error(`the measured service exited ${code} before reporting`)));
    });
    process.stdout.write(
      `${report.call}: ${report.files.length} project files ran during each of ${report.requests} warm calls\n` +
        `${report.files.map((file) => `  ${file}`).join('\n')}\n`,
    );
    const sometimes = [...new Set(report.perRequest.flat())].filter((file) => !report.files.includes(file));
    if (sometimes.length) process.stdout.write(`in some calls only (timers): ${sometimes.join(', ')}\n`);
    process.stdout.write(`${JSON.stringify({ call: report.call, files: report.files.length, list: report.files })}\n`);
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function measure() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // Started before the service's modules load, so every function of theirs is counted from its first call.
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  const port = await freePort();
  process.env.PORT = String(port);
  await import(pathToFileURL(path.join(ROOT, 'server/main.ts')).href);
  const base = `http://127.0.0.1:${port}`;
  await waitForAnswer(`${base}/readyz`);
  const call = async () => {
    const response = await fetch(`${base}${CALL}`, { headers: { 'x-partner-api-key': KEY } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${CALL}: ${response.status}`);
  };
  for (let i = 0; i < WARM_UP_CALLS; i++) await call();
  const perRequest: string[][] = [];
  for (let i = 0; i < Number(args.requests); i++) {
    // Taking the coverage resets the counts (callCount: true): what the next take reports is this call's.
    await session.post('Profiler.takePreciseCoverage');
    await call();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    perRequest.push(modulesThatRan(result));
  }
  const files = perRequest.reduce((common, files) => common.filter((file) => files.includes(file)));
  process.send?.({ call: CALL, requests: perRequest.length, files, perRequest } satisfies Report);
}

/** The project modules any function of which was called (a function's first range counts its calls). */
function modulesThatRan(scripts: { url: string; functions: { ranges: { count: number }[] }[] }[]): string[] {
  const ran = new Set<string>();
  for (const script of scripts) {
    if (!script.url.startsWith('file://')) continue;
    const file = path.relative(ROOT, fileURLToPath(script.url)).split(path.sep).join('/');
    if (!PROJECT_MODULE.test(file)) continue;
    if (script.functions.some((fn) => (fn.ranges[0]?.count ?? 0) > 0)) ran.add(file);
  }
  return [...ran].sort();
}

async function waitForAnswer(url: string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no answer from ${url} within ${timeoutMs} ms`);
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
