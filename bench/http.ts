import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { desc, eq, sql } from 'drizzle-orm';
import { buildDailyAggregate } from '../db/aggregate';
import type { Db } from '../db/client';
import { addDays, kstToday } from '../db/kst';
import { type BrandEntry, findPartnersBrands } from '../db/queries/brands';
import { type ReviewFilters, reviewListQuery } from '../db/queries/reviews';
import { brands, partners, reviewStatsDaily, reviews, salesDaily } from '../db/schema';
import { refreshStatistics } from '../db/seed/bulk';
import { DEMO_KEYS } from '../db/seed/demo';
import { BENCH_BRAND_CODE } from '../db/seed/large';
import { cpuSeconds } from './cpu';
import { measureGrowth } from './growth';
import { inlineParams, markdownTable, type Row, whole } from './lib';
import { paced } from './paced';
import {
  alternate,
  assertSameAnswer,
  type PeerRun,
  peerColumns,
  REFERENCE_SERVICE,
  referenceConfig,
} from './reference';
import { cleanUpOnExit, pgbenchTps, seededDatabase } from './scratch';

// npm run bench:http [-- --reviews N | --reuse DB] [--keep] [--duration S] [--only NAME] [--server-node BIN]
//   [--server-log FILE] [--server-dir DIR] [--baseline DIR] [--rounds N] [--keys N --brands M]
// The real server (`npm start` as a child, DATABASE_URL, in-process limiter, default log level)
// under autocannon (16 connections, loopback): warm-up, max throughput, latency at a fixed rate; beside it
// the physical limits in the same run: pgbench on the exact SQL of each review list, and a bare node:http
// server answering GET /brands' bytes. One table, also saved as JSON in bench/results/.

const { values: args } = parseArgs({
  options: {
    reviews: { type: 'string', default: '1000000' },
    reuse: { type: 'string' },
    keep: { type: 'boolean', default: false },
    duration: { type: 'string', default: '8' },
    only: { type: 'string' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    /** Run the server on this node binary instead of `npm start`'s (the before/after of a runtime). */
    'server-node': { type: 'string' },
    /** Append the server's log (its stdout: the access log) to this file instead of discarding it. */
    'server-log': { type: 'string' },
    /** Run the server of another checkout (built, `npm start` there) instead of this one's. */
    'server-dir': { type: 'string' },
    /** Also run the server of this checkout (built) beside it, alternately on the lists: a before and after in one run. */
    baseline: { type: 'string' },
    /** Alternate rounds of API, baseline and reference on each list (bench/reference.ts alternate). */
    rounds: { type: 'string', default: '3' },
    /** Also measure the daily build and the database's size (bench/growth.ts). */
    growth: { type: 'boolean', default: false },
    /** The name of the database seeded (with --keep, to --reuse later); else a scratch name. */
    name: { type: 'string' },
    /** Add this many keys and brands of other partners (once per database): the key and brand cache at scale. */
    keys: { type: 'string', default: '0' },
    brands: { type: 'string', default: '0' },
  },
});
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CONNECTIONS = 16;
const DURATION = Number(args.duration);
const WARMUP = 2;
const BASE = '/partner/v1/brands';

type Target = { p99At?: number; apiShareOfPgbench?: number; minReqPerSec?: number };
type Scenario = {
  name: string;
  path: string;
  /** A path known only from the running server (a D-19 cursor): followed from `path`. */
  followNext?: number;
  /** The fixed rate (req/s) of the latency run. */
  rate: number;
  target: Target;
  /** A review list: pgbench runs its exact SQL. */
  list?: { filters: ReviewFilters; page: number; limit: number };
};

// ---------------------------------------------------------------------------------------------------------
// Child processes and scratch databases are cleaned up on every exit path, Ctrl-C included (bench/scratch.ts).

const { children, cleanups, cleanUp, killGroup } = cleanUpOnExit();

function start(
  command: string,
  argv: string[],
  env: NodeJS.ProcessEnv = {},
  stdout: 'ignore' | number = 'ignore',
  cwd?: string,
) {
  const child = spawn(command, argv, {
    cwd,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', stdout, 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-2000);
    if (argv.includes(REFERENCE_SERVICE)) process.stderr.write(chunk);
  });
  child.on('exit', (code) => {
    if (children.has(child) && code) process.stderr.write(`${command} exited ${code}: ${stderr}\n`);
  });
  return child;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitReady(base: string, child: ChildProcess, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error('server exited before answering');
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no answer from ${base} within ${timeoutMs} ms`);
}

// ---------------------------------------------------------------------------------------------------------
// Load

type Load = { reqPerSec: number; p50: number; p99: number; answered: number; non2xx: number; errors: number };

// ---------------------------------------------------------------------------------------------------------
// CPU per call: where a call's cost is paid, the server process or PostgreSQL (bench/cpu.ts), read during
// the max-throughput run.

type CpuPerCall = { serverMs: number; postgresMs: number };

async function cannon(url: string, options: { duration: number; overallRate?: number }): Promise<Load> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: options.duration,
    overallRate: options.overallRate,
    headers: { 'x-partner-api-key': DEMO_KEYS.active },
    timeout: 10,
  });
  // A run in which no call came back has no latency: infinite, never a pass.
  const answered = result.requests.total;
  return {
    reqPerSec: result.requests.average,
    p50: answered ? result.latency.p50 : Number.POSITIVE_INFINITY,
    p99: answered ? result.latency.p99 : Number.POSITIVE_INFINITY,
    answered,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** Warm-up, then max throughput with the CPU per call of `serverGroup` and of PostgreSQL. */
async function measureMax(url: string, serverGroup?: number) {
  await cannon(url, { duration: WARMUP });
  const before = serverGroup === undefined ? undefined : cpuSeconds(serverGroup);
  const max = await cannon(url, { duration: DURATION });
  let cpu: CpuPerCall | undefined;
  if (serverGroup !== undefined && before && max.answered) {
    const after = cpuSeconds(serverGroup);
    cpu = {
      serverMs: ((after.server - before.server) * 1000) / max.answered,
      postgresMs: ((after.postgres - before.postgres) * 1000) / max.answered,
    };
  }
  return { max, cpu };
}

async function measure(url: string, rate: number, serverGroup?: number) {
  const { max, cpu } = await measureMax(url, serverGroup);
  // The latency targets are judged on evenly spaced calls (bench/paced.ts); autocannon's own fixed-rate
  // run, a burst of 16 at each second's start, is kept beside it for comparison with earlier tables.
  const fixed = await cannon(url, { duration: DURATION, overallRate: rate });
  const even = await paced(url, {
    rate,
    durationS: DURATION,
    connections: CONNECTIONS,
    headers: { 'x-partner-api-key': DEMO_KEYS.active },
  });
  return { max, fixed, even, cpu };
}

/** One scenario's measurements: max throughput (with CPU per call), autocannon's fixed rate, paced. */
type Measured = Awaited<ReturnType<typeof measure>>;

async function pgbench(databaseUrl: string, script: string, dir: string, name: string): Promise<number> {
  const file = path.join(dir, `${name.replace(/\W+/g, '_')}.sql`);
  await writeFile(file, `${script};\n`);
  return pgbenchTps(databaseUrl, ['-c', String(CONNECTIONS), '-j', '2', '-T', String(DURATION), '-f', file], children);
}

/**
 * The exact SQL the API runs for a list page, parameters inlined. The one place that knows the query
 * builder's signature (db/queries/reviews): adapt here if it changes. The API fetches limit + 1 rows
 * (has_next, db/queries/pagination.ts).
 */
function listSql(db: Db, scope: BrandEntry, list: Scenario['list']) {
  if (!list) throw new Error('not a list scenario');
  const query = reviewListQuery(db, scope, list.filters, {
    limit: list.limit + 1,
    offset: (list.page - 1) * list.limit,
  }).toSQL();
  return inlineParams(query.sql, query.params);
}

// ---------------------------------------------------------------------------------------------------------

function scenarios(today: string, reviewCode: string): Scenario[] {
  const brand = `${BASE}/${BENCH_BRAND_CODE}`;
  const last30 = { from: addDays(today, -29), to: today };
  const last366 = `from=${addDays(today, -366)}&to=${addDays(today, -1)}`;
  const listTarget: Target = { apiShareOfPgbench: 0.5, p99At: 40 };
  const keywordTarget: Target = { p99At: 100 };
  const statsTarget: Target = { p99At: 30 };
  const list = (
    name: string,
    filters: ReviewFilters,
    options: { page?: number; limit?: number; rate?: number; target?: Target } = {},
  ): Scenario => {
    const page = options.page ?? 1;
    const limit = options.limit ?? 20;
    const query = new URLSearchParams(
      Object.entries({ ...filters, ...(page !== 1 && { page }), ...(limit !== 20 && { limit }) }).map(
        ([k, v]): [string, string] => [k, String(v)],
      ),
    ).toString();
    return {
      name,
      path: `${brand}/reviews${query ? `?${query}` : ''}`,
      rate: options.rate ?? 300,
      target: options.target ?? listTarget,
      list: { filters, page, limit },
    };
  };
  return [
    { name: 'GET /brands', path: BASE, rate: 300, target: { minReqPerSec: 4000 } },
    list('reviews, newest page', {}),
    list('reviews, 30 days + platform', { ...last30, platform: 'BAEMIN' }),
    list('keyword 맛있어 (3 chars, common)', { keyword: '맛있어' }, { rate: 100, target: keywordTarget }),
    list('keyword absent, 3+ chars', { keyword: '존재하지않는말' }, { rate: 100, target: keywordTarget }),
    list('keyword 짜요 (2 chars)', { keyword: '짜요' }, { rate: 100, target: keywordTarget }),
    list('keyword 짜요 (2 chars) + 30 days', { keyword: '짜요', ...last30 }, { rate: 100, target: keywordTarget }),
    list('keyword 맛 (1 char)', { keyword: '맛' }, { rate: 100, target: keywordTarget }),
    list('page 1, limit 100', {}, { limit: 100 }),
    list('page 1000, limit 100', {}, { page: 1000, limit: 100 }),
    {
      // D-19: the same page reached by cursor, the way to deep pages at page-1 cost.
      name: 'page 1000 by cursor, limit 100',
      path: `${brand}/reviews?limit=100`,
      followNext: 999,
      rate: 300,
      target: { p99At: 40 },
    },
    { name: 'single review', path: `${brand}/reviews/${reviewCode}`, rate: 300, target: { p99At: 40 } },
    ...(['shop', 'platform', 'date'] as const).map(
      (groupBy): Scenario => ({
        name: `review-stats by ${groupBy}, 366 days`,
        path: `${brand}/review-stats?group_by=${groupBy}&${last366}`,
        rate: 100,
        target: statsTarget,
      }),
    ),
    ...(['shop', 'platform', 'user', 'date', 'week'] as const).map(
      (groupBy): Scenario => ({
        name: `sales by ${groupBy}, 366 days`,
        path: `${brand}/sales?group_by=${groupBy}&${last366}`,
        rate: 100,
        target: statsTarget,
      }),
    ),
  ];
}

/** The path `times` rel="next" links after `path` (D-19), as a partner walking the cursor reaches it. */
async function followLinks(base: string, path: string, times: number): Promise<string> {
  let current = path;
  for (let i = 0; i < times; i++) {
    const response = await fetch(`${base}${current}`, { headers: { 'x-partner-api-key': DEMO_KEYS.active } });
    await response.arrayBuffer();
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    if (!response.ok || !next) throw new Error(`${current}: ${response.status}, no rel="next" after ${i} pages`);
    current = next;
  }
  return current;
}

/** A bare node:http server answering `body` to every request: the transport's ceiling for GET /brands. */
async function bareServer(body: string) {
  const port = await freePort();
  const child = start(
    process.execPath,
    [
      '-e',
      `const body = Buffer.from(process.env.BODY);
       require('node:http').createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); }).listen(${port}, '127.0.0.1');`,
    ],
    { BODY: body },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, child);
  return { base, group: child.pid, stop: () => killGroup(child) };
}

/**
 * Keys and brands of partners the bench does not call, to measure the key and brand cache at scale: `brands`
 * brands over one partner per 10, `keys` keys over the same partners. Seeded once per database.
 */
async function seedOtherPartners(db: Db, keys: number, brandCount: number) {
  if (!keys && !brandCount) return;
  const partnerCount = Math.max(1, Math.ceil(brandCount / 10));
  await db.transaction(async (tx) => {
    const seeded = (await tx.execute(
      sql`SELECT count(*)::int AS n FROM partners WHERE name LIKE 'Scale partner %'`,
    )) as unknown as { n: number }[];
    if (Number(seeded[0]?.n) > 0) return;
    await tx.execute(
      sql`INSERT INTO partners (name) SELECT 'Scale partner ' || n FROM generate_series(1, ${partnerCount}) n`,
    );
    await tx.execute(sql`
      INSERT INTO brands (partner_id, brand_code, display_name)
      SELECT p.id, 'scale-' || n, 'Scale brand ' || n
      FROM generate_series(1, ${brandCount}) n
      JOIN partners p ON p.name = 'Scale partner ' || (1 + n % ${partnerCount})`);
    await tx.execute(sql`
      INSERT INTO api_keys (partner_id, key_hash, display_prefix)
      SELECT p.id, encode(sha256(convert_to('scale key ' || n, 'UTF8')), 'hex'), 'pk_live_scale…'
      FROM generate_series(1, ${keys}) n
      JOIN partners p ON p.name = 'Scale partner ' || (1 + n % ${partnerCount})`);
  });
  await db.execute(sql`ANALYZE partners, brands, api_keys`);
}

/** The resident memory of a process group (the server), in MiB; undefined when it cannot be read. */
function rssMiB(group: number | undefined): number | undefined {
  if (group === undefined) return undefined;
  let kib = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== group) continue;
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1] ?? 0);
    } catch {}
  }
  return kib / 1024;
}

async function main() {
  const startedAt = Date.now();
  const now = new Date();
  // A kept database gets the migrations added since it was seeded.
  const { dbName, databaseUrl, database } = await seededDatabase({
    adminUrl: ADMIN_URL,
    name: args.name ?? `partner_bench_${process.pid}`,
    reuse: args.reuse,
    keep: args.keep,
    reviews: Number(args.reviews),
    now,
    cleanups,
  });
  const growth = args.growth ? await measureGrowth(database, now) : undefined;
  await seedOtherPartners(database.db, Number(args.keys), Number(args.brands));
  const building = Date.now();
  const aggregate = await buildDailyAggregate(database.db, { now });
  // The aggregate rebuilds its tables; the bench must not measure a planner blind to them.
  await refreshStatistics(database.db, [reviewStatsDaily, salesDaily]);
  process.stdout.write(
    `daily aggregate (${aggregate.kind}): ${aggregate.writtenRows} rows written in ${((Date.now() - building) / 1000).toFixed(1)} s\n`,
  );

  const [partner] = await database.db
    .select({ id: partners.id })
    .from(brands)
    .innerJoin(partners, eq(partners.id, brands.partnerId))
    .where(eq(brands.brandCode, BENCH_BRAND_CODE));
  const ownBrands = (partner && (await findPartnersBrands(database.db, [partner.id])).get(partner.id)) ?? [];
  const scope = ownBrands.find((brand) => brand.brandCode === BENCH_BRAND_CODE);
  if (!partner || !scope) throw new Error(`${dbName} has no ${BENCH_BRAND_CODE}: seed it (drop --reuse)`);
  const [newest] = await database.db
    .select({ code: reviews.reviewCode })
    .from(reviews)
    .where(eq(reviews.brandId, scope.id))
    .orderBy(desc(reviews.writtenAt))
    .limit(1);
  const [{ count } = { count: 0 }] = await database.rows<{ count: number }>(
    sql`SELECT count(*)::int AS count FROM reviews WHERE brand_id = ${scope.id}`,
  );
  const all = scenarios(kstToday(now), newest?.code ?? 'B0000000001').filter(
    // --only: one name part, or several separated by `|`.
    (scenario) => !args.only || args.only.split('|').some((part) => scenario.name.includes(part)),
  );

  // The real server, as `npm start` runs it; RATE_LIMIT_PER_MINUTE high so the limiter decides but never refuses.
  const serve = async (env: NodeJS.ProcessEnv, dir = args['server-dir']) => {
    const port = await freePort();
    const [command, ...argv] = args['server-node']
      ? [args['server-node'], path.resolve('node_modules/tsx/dist/cli.mjs'), 'server/main.ts']
      : ['npm', 'run', '-s', 'start'];
    const child = start(
      command ?? 'npm',
      argv,
      {
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        RATE_LIMIT_PER_MINUTE: '1000000',
        LOG_LEVEL: '',
        REDIS_URL: '',
        ...env,
      },
      args['server-log'] ? openSync(args['server-log'], 'a') : 'ignore',
      dir,
    );
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, child);
    return { base, group: child.pid, stop: () => killGroup(child) };
  };

  const results: (Row & { pass?: string })[] = [];
  const json: Record<string, unknown>[] = [];
  const server = await serve({});
  // The hand-written reference (bench/reference.ts), measured right after the API on each review list.
  const lists = all.flatMap((scenario) => (scenario.list && !scenario.followNext ? [scenario.list] : []));
  const reference = await (async () => {
    if (!lists.length) return undefined;
    const port = await freePort();
    const child = start(process.execPath, ['--import', 'tsx', REFERENCE_SERVICE], {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      REFERENCE: referenceConfig(database.db, DEMO_KEYS.active, { ...scope, partnerId: partner.id }, ownBrands, lists),
    });
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, child);
    return { base, group: child.pid, stop: () => killGroup(child) };
  })();
  const baseline = args.baseline ? await serve({}, args.baseline) : undefined;
  const referenced: Record<string, Partial<Record<'api' | 'baseline' | 'reference', PeerRun>>> = {};
  let brandsBody = '';
  const api: Record<string, Measured> = {};
  for (const scenario of all) {
    process.stdout.write(`${scenario.name} …\n`);
    const scenarioPath = await followLinks(server.base, scenario.path, scenario.followNext ?? 0);
    const check = await fetch(`${server.base}${scenarioPath}`, { headers: { 'x-partner-api-key': DEMO_KEYS.active } });
    const body = await check.text();
    if (!check.ok) throw new Error(`${scenarioPath}: ${check.status} ${body.slice(0, 300)}`);
    if (scenario.name === 'GET /brands') brandsBody = body;
    api[scenario.name] = await measure(`${server.base}${scenarioPath}`, scenario.rate, server.group);
    const peers: Partial<Record<'api' | 'baseline' | 'reference', () => Promise<PeerRun>>> = {};
    if (reference && scenario.list && !scenario.followNext) {
      // A reference that fails a scenario (its error is on its stderr) leaves that scenario without a
      // reference column; an answer that differs stops the run.
      const response = await fetch(`${reference.base}${scenarioPath}`, {
        headers: { 'x-partner-api-key': DEMO_KEYS.active },
      });
      const answer = { status: response.status, body: await response.text() };
      if (answer.status >= 500) {
        process.stdout.write(`  the reference failed ${scenario.name} (${answer.status}): no reference column\n`);
      } else {
        assertSameAnswer(scenario.name, body, answer.body);
        peers.reference = () => measureMax(`${reference.base}${scenarioPath}`, reference.group);
      }
    }
    if (baseline) peers.baseline = () => measureMax(`${baseline.base}${scenarioPath}`, baseline.group);
    // GET /brands' reference is the bare node:http server on its bytes.
    const bare = scenario.name === 'GET /brands' ? await bareServer(body) : undefined;
    if (bare) peers.reference = () => measureMax(`${bare.base}${BASE}`, bare.group);
    if (peers.reference || peers.baseline) {
      process.stdout.write(`  … alternately with ${Object.keys(peers).join(' and ')}\n`);
      peers.api = () => measureMax(`${server.base}${scenarioPath}`, server.group);
      referenced[scenario.name] = await alternate(Number(args.rounds), peers);
    }
    bare?.stop();
  }
  reference?.stop();
  baseline?.stop();
  // GET /brands with the shared Redis limiter (D-14): its cost against the in-process limiter, measured
  // back to back (plain, Redis, plain, Redis; the best of each) so the shared machine's drift cancels out.
  let redisBrands: Measured | undefined;
  let plainBrands: Measured | undefined;
  if (args.redis && all.some((s) => s.name === 'GET /brands')) {
    const withRedis = await serve({ REDIS_URL: args.redis });
    process.stdout.write('GET /brands, in-process against REDIS_URL …\n');
    const best = (a: Measured | undefined, b: Measured) => (a && a.max.reqPerSec >= b.max.reqPerSec ? a : b);
    for (let round = 0; round < 2; round++) {
      plainBrands = best(plainBrands, await measure(`${server.base}${BASE}`, 300));
      redisBrands = best(redisBrands, await measure(`${withRedis.base}${BASE}`, 300));
    }
    withRedis.stop();
  }
  const serverRss = rssMiB(server.group);
  process.stdout.write(`server RSS at the end: ${serverRss?.toFixed(0) ?? '?'} MiB\n`);
  server.stop();

  // The transport ceiling: a bare node:http server answering GET /brands' bytes.
  let bare: Load | undefined;
  if (brandsBody) {
    const server = await bareServer(brandsBody);
    process.stdout.write('bare node:http …\n');
    await cannon(`${server.base}${BASE}`, { duration: WARMUP });
    bare = await cannon(`${server.base}${BASE}`, { duration: DURATION });
    server.stop();
  }

  // pgbench on the exact SQL of each review list.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-http-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const tps: Record<string, number> = {};
  for (const scenario of all) {
    if (!scenario.list) continue;
    process.stdout.write(`pgbench: ${scenario.name} …\n`);
    tps[scenario.name] = await pgbench(databaseUrl, listSql(database.db, scope, scenario.list), dir, scenario.name);
  }

  const page1 = api['page 1, limit 100'];
  for (const scenario of all) {
    const measured = api[scenario.name];
    if (!measured) continue;
    const { max, fixed, even, cpu } = measured;
    const limit = tps[scenario.name] ?? (scenario.name === 'GET /brands' ? bare?.reqPerSec : undefined);
    const ratio = limit ? max.reqPerSec / limit : undefined;
    const failures: string[] = [];
    const t = scenario.target;
    if (t.p99At !== undefined && even.p99 > t.p99At) failures.push(`p99>${t.p99At}`);
    if (t.minReqPerSec !== undefined && max.reqPerSec < t.minReqPerSec) failures.push(`<${t.minReqPerSec}/s`);
    if (t.apiShareOfPgbench !== undefined && ratio !== undefined && ratio < t.apiShareOfPgbench)
      failures.push(`<${t.apiShareOfPgbench * 100}% pgbench`);
    if (scenario.name.startsWith('page 1000') && page1 && even.p50 > 2 * page1.even.p50) failures.push('p50>2×page 1');
    if (!max.answered || even.answered < even.due) failures.push('no answer');
    if (max.non2xx || max.errors || fixed.non2xx || fixed.errors || even.non2xx || even.errors) failures.push('errors');
    const targetText = [
      t.minReqPerSec && `≥${whole(t.minReqPerSec)}/s`,
      t.apiShareOfPgbench && `≥${t.apiShareOfPgbench * 100}% pgbench`,
      t.p99At && `p99≤${t.p99At}@${scenario.rate}`,
      scenario.name.startsWith('page 1000') && 'p50≤2×page 1',
    ]
      .filter(Boolean)
      .join(', ');
    results.push({
      scenario: scenario.name,
      'max req/s': whole(max.reqPerSec),
      'p50 / p99 ms at rate': even.answered
        ? `${even.p50} / ${even.p99} @${scenario.rate}`
        : `no answer in ${DURATION} s @${scenario.rate}`,
      'autocannon at rate (bursts)': fixed.answered ? `${fixed.p50} / ${fixed.p99}` : 'no answer',
      target: targetText,
      'limit (pgbench tps / bare http)': limit === undefined ? '' : whole(limit),
      'API / limit': ratio === undefined ? '' : `${(ratio * 100).toFixed(0)} %`,
      'CPU ms per call, server / PostgreSQL': cpu ? `${cpu.serverMs.toFixed(2)} / ${cpu.postgresMs.toFixed(2)}` : '',
      ...peerColumns(referenced[scenario.name]),
      pass: failures.length ? `FAIL (${failures.join(', ')})` : 'pass',
    });
    json.push({
      ...scenario,
      max,
      fixed,
      paced: even,
      cpu,
      limit,
      ratio,
      failures,
      peers: referenced[scenario.name],
    });
  }
  if (redisBrands) {
    const plain = plainBrands;
    const cost = plain ? 1 - redisBrands.max.reqPerSec / plain.max.reqPerSec : undefined;
    results.push({
      scenario: 'GET /brands, REDIS_URL',
      'max req/s': whole(redisBrands.max.reqPerSec),
      'p50 / p99 ms at rate': `${redisBrands.even.p50} / ${redisBrands.even.p99} @300`,
      'autocannon at rate (bursts)': `${redisBrands.fixed.p50} / ${redisBrands.fixed.p99}`,
      target: `Redis costs ≤15 % (in-process, back to back: ${whole(plainBrands?.max.reqPerSec ?? Number.NaN)})`,
      'limit (pgbench tps / bare http)': '',
      'API / limit': cost === undefined ? '' : `costs ${(cost * 100).toFixed(0)} %`,
      pass: cost !== undefined && cost <= 0.15 ? 'pass' : 'FAIL',
    });
    json.push({ name: 'GET /brands, REDIS_URL', ...redisBrands, cost });
  }
  if (bare) {
    results.push({
      scenario: 'bare node:http, /brands bytes',
      'max req/s': whole(bare.reqPerSec),
      'p50 / p99 ms at rate': '',
      target: '(transport ceiling)',
      'limit (pgbench tps / bare http)': '',
      'API / limit': '',
      pass: '',
    });
    json.push({ name: 'bare node:http', max: bare });
  }

  const machine = {
    nproc: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    // The server's node: --server-node's, else npm start's, which is this process's (same npm, same PATH).
    node: args['server-node'] ? execFileSync(args['server-node'], ['--version']).toString().trim() : process.version,
    postgres: (await database.rows<{ v: string }>(sql`SELECT current_setting('server_version') AS v`))[0]?.v,
    loadAverage: os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
    reviews: count,
    database: dbName,
    ...(
      await database.rows<{ keys: number; brands: number }>(
        sql`SELECT (SELECT count(*)::int FROM api_keys) AS keys, (SELECT count(*)::int FROM brands) AS brands`,
      )
    )[0],
  };
  const table = markdownTable(results);
  process.stdout.write(
    `\n${BENCH_BRAND_CODE}, ${whole(count)} reviews; ${machine.nproc} cores, server on Node ${machine.node}, PostgreSQL ${machine.postgres}; ` +
      `autocannon ${CONNECTIONS} connections, ${DURATION} s per run; load average at the end ${machine.loadAverage}; ` +
      `${whole(machine.keys ?? 0)} keys, ${whole(machine.brands ?? 0)} brands; server RSS at the end ${serverRss?.toFixed(0) ?? '?'} MiB\n\n${table}\n`,
  );
  const resultsDir = path.resolve(import.meta.dirname, 'results');
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `http-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify({ machine, results: json, table, growth }, null, 2)}\n`);
  process.stdout.write(
    `\nsaved ${path.relative(process.cwd(), file)}; ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all\n`,
  );
  if (!args.reuse && args.keep) process.stdout.write(`kept database ${dbName}: rerun with --reuse ${dbName}\n`);
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanUp().then(() => process.exit()));
