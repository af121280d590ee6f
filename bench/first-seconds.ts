import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { markdownTable } from './lib';
import { type PacedCall, paced, quantile } from './paced';

// npm run bench:first-seconds [-- --tree PATH] [--rate 150] [--duration 30] [--bucket 1] [--rounds N]
// [--aggregate cli|start] [--analyze] [--embedded] [--skip TEXT …] [--env NAME=VALUE …] [--node-arg FLAG …]
// [--label NAME]: a fresh instance's first seconds under load. It creates a scratch PostgreSQL database,
// migrates and seeds the demo data with the CLIs of the tree under test (dist/server/cli/*.js: build that
// tree first), builds the daily aggregate with its CLI (--aggregate cli, the default) or leaves that to the
// service's own start-up run (--aggregate start), then starts `node dist/server/main.js` of the tree with
// PORT=0. From the moment its `listening` line is read, it sends a mixed load (every endpoint, the reviews
// list with and without filters) spaced evenly at --rate over 16 keep-alive connections (bench/paced.ts:
// open loop, each latency counted from when the call was due). Per bucket of the run: calls due, answered,
// p50, p99, non-2xx, the CPU of the server and of its PostgreSQL backends, the load average. With --rounds 2
// the same load runs again on the now warm instance, under the same machine load: what a fresh start adds
// is the difference. The database is dropped at the end; the raw results go to bench/results/.
// DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres).

const KEY = 'pk_test_demo_active';
const BRAND = '/partner/v1/brands/chicken-house';
/** The mixed load, in turn: each call takes the next of these. */
const ALL_PATHS = [
  '/partner/v1/brands',
  `${BRAND}/reviews?limit=20`,
  `${BRAND}/reviews?platform=BAEMIN&limit=20`,
  `${BRAND}/reviews?keyword=%EB%A7%88%EB%9D%BC&limit=20`,
  `${BRAND}/reviews/R000000001`,
  `${BRAND}/users?limit=50`,
  `${BRAND}/users/u-ch-001`,
  `${BRAND}/shops?limit=100`,
  `${BRAND}/review-stats`,
  `${BRAND}/sales`,
];
const RESULTS = path.resolve(import.meta.dirname, 'results');
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

const { values: args } = parseArgs({
  options: {
    tree: { type: 'string', default: path.resolve(import.meta.dirname, '..') },
    rate: { type: 'string', default: '150' },
    duration: { type: 'string', default: '30' },
    connections: { type: 'string', default: '16' },
    bucket: { type: 'string', default: '1' },
    /** Rounds of the load on the same instance: the first from a fresh start, the next ones warm. */
    rounds: { type: 'string', default: '1' },
    aggregate: { type: 'string', default: 'cli' },
    env: { type: 'string', multiple: true, default: [] },
    'node-arg': { type: 'string', multiple: true, default: [] },
    label: { type: 'string' },
    /**
     * ANALYZE the scratch database before the start: planner statistics the seed leaves to autovacuum (off on
     * this machine), so the plans are the ones a database in service gets.
     */
    analyze: { type: 'boolean', default: false },
    /** The embedded demo (PGlite, in process) instead of a scratch PostgreSQL database. */
    embedded: { type: 'boolean', default: false },
    /** Leaves out of the mix the paths that contain this text (to see what one kind of call costs). */
    skip: { type: 'string', multiple: true, default: [] },
  },
});
const PATHS = ALL_PATHS.filter((p) => !args.skip.some((text) => p.includes(text)));

const tree = path.resolve(args.tree);
const rate = Number(args.rate);
const durationS = Number(args.duration);
const bucketS = Number(args.bucket);
if (!(rate > 0 && rate <= 1000 && durationS > 0 && durationS <= 120 && bucketS > 0))
  throw new Error('--rate is 1..1000, --duration 1..120 s, --bucket > 0');
if (!['cli', 'start'].includes(args.aggregate)) throw new Error('--aggregate is cli or start');
if (!existsSync(path.join(tree, 'dist/server/main.js')))
  throw new Error(`${tree}: no dist/server/main.js (npm run build)`);

/** CPU seconds (user + system) of a process, or undefined once it is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return undefined;
  }
}

/** The PostgreSQL backends serving `database` (their title names it), when the server runs on this host. */
function backendsOf(database: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(` ${database} `)) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}

type Sample = { t: number; serverCpuS: number; backendsCpuS: number; backends: number; load1: number };

/** The service's environment beside its database: a loopback port of its choice, the in-process limiter. */
function serviceEnv(): NodeJS.ProcessEnv {
  const extra = Object.fromEntries(
    args.env.map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: '',
    UPSTASH_REDIS_REST_URL: '',
    // Far above the load, so the limiter decides each call but refuses none.
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...extra,
  };
}

/** The embedded demo (no DATABASE_URL) with an empty TMPDIR: a newcomer's first start of the day. */
async function embedded() {
  const tmp = mkdtempSync(path.join(tmpdir(), 'partner-first-seconds-'));
  try {
    await measure({ ...process.env, DATABASE_URL: '', TMPDIR: tmp, ...serviceEnv() }, undefined);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function main() {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `partner_first_${process.pid}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  try {
    const env = { ...process.env, DATABASE_URL: url.toString() };
    const clis = args.aggregate === 'cli' ? ['migrate', 'seed', 'aggregate'] : ['migrate', 'seed'];
    for (const cli of clis)
      execFileSync(process.execPath, [`dist/server/cli/${cli}.js`], {
        cwd: tree,
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    if (args.analyze) {
      const scratch = postgres(url.toString(), { max: 1, onnotice: () => {} });
      await scratch.unsafe('ANALYZE');
      await scratch.end();
    }
    await measure({ ...env, ...serviceEnv() }, name);
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function measure(env: NodeJS.ProcessEnv, database: string | undefined) {
  const loadBefore = loadavg();
  const spawned = performance.now();
  const child = spawn(process.execPath, [...args['node-arg'], 'dist/server/main.js'], {
    cwd: tree,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const pid = child.pid ?? 0;
  let listenedAt = Number.POSITIVE_INFINITY;
  /** The service's lines other than the access log, with their time after `listening` (s). */
  const seen: { at: number; msg: string; line: string }[] = [];
  const base = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the service exited ${code} before listening`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry: { msg?: string; base?: string; method?: string };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg === 'listening' && entry.base) {
        listenedAt = performance.now();
        resolve(entry.base);
      }
      // Access lines carry the method; the rest (start-up, the daily aggregate, failures) are kept.
      if (entry.method === undefined && entry.msg)
        seen.push({ at: performance.now(), msg: entry.msg, line: line.slice(0, 400) });
    });
  });
  const startupMs = Math.round(listenedAt - spawned);
  const events = () => seen.map(({ at, ...event }) => ({ t: round1((at - listenedAt) / 1000), ...event }));
  const cpuAtListen = cpuSeconds(pid) ?? 0;

  const samples: Sample[] = [];
  const sample = () => {
    const backends = database ? backendsOf(database) : [];
    samples.push({
      t: (performance.now() - listenedAt) / 1000,
      serverCpuS: cpuSeconds(pid) ?? Number.NaN,
      backendsCpuS: backends.reduce((sum, backend) => sum + (cpuSeconds(backend) ?? 0), 0),
      backends: backends.length,
      load1: loadavg()[0] ?? 0,
    });
  };
  sample();
  const sampler = setInterval(sample, 1000);
  const rounds = [];
  for (let round = 1; round <= Number(args.rounds); round++) {
    const offsetS = (performance.now() - listenedAt) / 1000;
    const calls: PacedCall[] = [];
    const overall = await paced((i) => `${base}${PATHS[i % PATHS.length]}`, {
      rate,
      durationS,
      connections: Number(args.connections),
      headers: { 'x-partner-api-key': KEY },
      onAnswer: (call) => calls.push(call),
    });
    rounds.push({
      round,
      startS: round1(offsetS),
      overall,
      buckets: bucketRows(calls, samples, offsetS, bucketS),
      buckets5s: bucketRows(calls, samples, offsetS, 5),
      perPath: perPath(calls),
    });
  }
  clearInterval(sampler);
  sample();
  const cpuAtEnd = cpuSeconds(pid) ?? Number.NaN;
  const loadAfter = loadavg();
  // SIGTERM drains and exits, so a --cpu-prof profile is written.
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(killer);

  const report = {
    tree,
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: tree, encoding: 'utf8' }).trim(),
    label: args.label,
    at: new Date().toISOString(),
    rate,
    durationS,
    connections: Number(args.connections),
    aggregate: args.aggregate,
    embedded: args.embedded,
    analyzed: args.analyze,
    env: args.env,
    paths: PATHS,
    nodeArgs: args['node-arg'],
    startupMs,
    load: { before: loadBefore.map(round1), after: loadAfter.map(round1) },
    serverCpuS: { start: round1(cpuAtListen), run: round1(cpuAtEnd - cpuAtListen) },
    rounds,
    events: events(),
  };
  mkdirSync(RESULTS, { recursive: true });
  const file = path.join(
    RESULTS,
    `first-seconds-${args.label ?? path.basename(tree)}-${report.at.replaceAll(/[:.]/g, '-')}.json`,
  );
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(
    `${tree} (${report.commit}), ${rate} req/s for ${durationS} s × ${rounds.length}, ${args.embedded ? 'embedded demo' : `aggregate by ${args.aggregate}`}${args.analyze ? ', analyzed' : ''}; ` +
      `listening after ${startupMs} ms (${report.serverCpuS.start} s CPU); load ${report.load.before.join(' ')} → ${report.load.after.join(' ')}\n`,
  );
  for (const r of rounds)
    process.stdout.write(
      `\nround ${r.round} (from ${r.startS} s after listening${r.round === 1 ? ', fresh' : ''})\n${markdownTable(r.buckets)}\n\n` +
        `${markdownTable(r.buckets5s)}\n\noverall: ${JSON.stringify(r.overall)}\n${markdownTable(r.perPath)}\n`,
    );
  process.stdout.write(
    `\nserver CPU during the run ${report.serverCpuS.run} s\n` +
      `${report.events.map((event) => `  ${event.t} s: ${event.msg}`).join('\n')}\n${file}\n`,
  );
}

/** p50 of each path of the mix over the round's first and last 5 s. */
function perPath(calls: readonly PacedCall[]) {
  return PATHS.map((p, index) => {
    const of = (from: number, to: number) =>
      calls
        .filter((call) => call.i % PATHS.length === index && call.due >= from * 1000 && call.due < to * 1000)
        .map((call) => call.ms)
        .sort((a, b) => a - b);
    return {
      path: p,
      'p50 first 5 s': round1(quantile(of(0, 5), 0.5)),
      'p50 last 5 s': round1(quantile(of(durationS - 5, durationS), 0.5)),
    };
  });
}

/**
 * Per bucket of due time: calls due, answered, p50/p99 (ms), non-2xx; per bucket of wall time since listening:
 * calls finished, the server's and its PostgreSQL backends' CPU (% of one core, and per call finished), load.
 */
function bucketRows(calls: readonly PacedCall[], samples: readonly Sample[], offsetS: number, size: number) {
  const rows = [];
  for (let from = 0; from < durationS; from += size) {
    const to = Math.min(durationS, from + size);
    const due = Math.max(0, Math.ceil(to * rate - 1e-9) - Math.ceil(from * rate - 1e-9));
    const inBucket = calls.filter((call) => call.due >= from * 1000 && call.due < to * 1000);
    const ms = inBucket.map((call) => call.ms).sort((a, b) => a - b);
    // The samples nearest the bucket's edges (wall time since listening).
    const at = (t: number) =>
      samples.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best), samples[0] as Sample);
    const [start, end] = [at(offsetS + from), at(offsetS + to)];
    const span = end.t - start.t || Number.NaN;
    // Calls finished within the bucket's wall time (due + latency): what the CPU of that time paid for.
    const done = calls.filter((call) => {
      const at = offsetS + (call.due + call.ms) / 1000;
      return at >= start.t && at < end.t;
    }).length;
    rows.push({
      s: `${from}–${to}`,
      due,
      answered: ms.length,
      p50: round1(quantile(ms, 0.5)),
      p99: round1(quantile(ms, 0.99)),
      non2xx: inBucket.filter((call) => call.status < 200 || call.status >= 300).length,
      done,
      'server CPU %': Math.round(((end.serverCpuS - start.serverCpuS) / span) * 100),
      'server CPU ms/call': round1(((end.serverCpuS - start.serverCpuS) * 1000) / done),
      'PG CPU %': Math.round(((end.backendsCpuS - start.backendsCpuS) / span) * 100),
      'PG CPU ms/call': round1(((end.backendsCpuS - start.backendsCpuS) * 1000) / done),
      backends: end.backends,
      load1: round1(end.load1),
    });
  }
  return rows;
}

function round1(n: number) {
  return Number.isFinite(n) ? Math.round(n * 10) / 10 : n;
}

await (args.embedded ? embedded() : main());
