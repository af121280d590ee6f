import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { DEMO_KEYS } from '../db/seed/demo';
import { markdownTable, whole } from './lib';

// npm run bench:start [-- --clone] [-- --server-node BIN | --command 'node …'] [-- --runs N] [-- --idle S]
//   [-- --duration S]: the embedded default as a partner first meets it: `npm start` (PGlite, demo data) with
// an empty TMPDIR, --runs times (5), each until the first answer of GET /partner/v1/brands: the time, the CPU
// time, the server's RSS at that answer and after --idle seconds (60) idle; then the demo reviews list under
// autocannon (16 connections, loopback). With --clone it runs in a fresh clone of this repository's HEAD
// after `npm ci` (not timed: installing builds what the start reads), with no state outside the clone.
// Targets (D-1): first answer ≤ 5 s, RSS ≤ 300 MB at the first answer and idle, ≥ 500 req/s. The table is
// saved as JSON in bench/results/.

/** The raw results of every run, this checkout's (not the clone's). */
const RESULTS = path.resolve(import.meta.dirname, 'results');

const { values: args } = parseArgs({
  options: {
    'server-node': { type: 'string' },
    /** Instead of `npm start`: a command line (split at spaces), e.g. the compiled server under plain node. */
    command: { type: 'string' },
    duration: { type: 'string', default: '8' },
    runs: { type: 'string', default: '5' },
    idle: { type: 'string', default: '60' },
    clone: { type: 'boolean', default: false },
  },
});

/** RSS in MB and CPU seconds (user + system) of each process of a process group, with its command line. */
function groupRss(pgid: number) {
  const found: { pid: number; rssMb: number; cpuS: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      // utime and stime, fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
      const cpuS = (Number(fields[11]) + Number(fields[12])) / 100;
      found.push({ pid: Number(entry), rssMb: Number(rss ?? 0) / 1024, cpuS, command });
    } catch {}
  }
  return found;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

type Started = {
  firstAnswerMs: number;
  /** The first answer of the demo reviews list, asked right after that: it waits for the database. */
  firstReviewsMs: number;
  cpuS: number;
  /** The biggest process of the group (the server) at the first answer. */
  rssAtAnswerMb: number;
  port: number;
  pid: number;
  stop: () => void;
};

/** Starts the server in `cwd` with `env`, and times its first answer of GET /brands. */
async function startServer(cwd: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const port = await freePort();
  const [command, ...argv] = args.command
    ? args.command.split(' ').filter(Boolean)
    : args['server-node']
      ? [args['server-node'], path.resolve(cwd, 'node_modules/tsx/dist/cli.mjs'), 'server/main.ts']
      : ['npm', 'run', '-s', 'start'];
  const started = performance.now();
  const child = spawn(command ?? 'npm', argv, {
    cwd,
    // A limit far above the load, so the limiter decides but never refuses.
    env: { ...env, PORT: String(port), DATABASE_URL: '', REDIS_URL: '', RATE_LIMIT_PER_MINUTE: '1000000' },
    detached: true,
    stdio: 'ignore',
  });
  const stop = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
    } catch {}
  };
  process.once('SIGINT', () => {
    stop();
    process.exit(130);
  });
  const url = `http://127.0.0.1:${port}/partner/v1/brands`;
  while (performance.now() - started < 60_000) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}`);
    const ok = await fetch(url, { headers: { 'x-partner-api-key': DEMO_KEYS.active } }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) {
      const firstAnswerMs = performance.now() - started;
      // On a machine shared with other work the wall time is the CPU time plus waiting for a core: the CPU
      // time of the start's processes is what a quiet machine would come close to.
      const group = groupRss(child.pid ?? 0);
      const cpuS = group.reduce((sum, p) => sum + p.cpuS, 0);
      const rssAtAnswerMb = Math.max(...group.map((p) => p.rssMb));
      const reviews = await fetch(`http://127.0.0.1:${port}/partner/v1/brands/chicken-house/reviews`, {
        headers: { 'x-partner-api-key': DEMO_KEYS.active },
      });
      if (!reviews.ok) throw new Error(`reviews list: ${reviews.status}`);
      await reviews.arrayBuffer();
      return {
        firstAnswerMs,
        firstReviewsMs: performance.now() - started,
        cpuS,
        rssAtAnswerMb,
        port,
        pid: child.pid ?? 0,
        stop,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  stop();
  throw new Error('no answer within 60 s');
}

/** The server's and the whole group's RSS, `afterMs` after the first answer. */
async function idleRss(pid: number, afterMs: number) {
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  const idle = groupRss(pid);
  // The server is the biggest process of the group (npm and sh are small beside it).
  const server = idle.reduce<(typeof idle)[number] | undefined>(
    (big, p) => (big && big.rssMb >= p.rssMb ? big : p),
    undefined,
  );
  return {
    serverMb: server?.rssMb ?? Number.NaN,
    server: `${whole(server?.rssMb ?? Number.NaN)} MB`,
    all: `${whole(idle.reduce((sum, p) => sum + p.rssMb, 0))} MB (${idle.map((p) => `${p.command.split(' ')[0]?.split('/').pop()} ${whole(p.rssMb)}`).join(', ')})`,
  };
}

async function main() {
  const scratch = mkdtempSync(path.join(tmpdir(), 'partner-api-bench-start-'));
  let cwd = process.cwd();
  if (args.clone) {
    cwd = path.join(scratch, 'clone');
    execFileSync('git', ['clone', '--quiet', '--no-hardlinks', process.cwd(), cwd], { stdio: 'inherit' });
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd, stdio: 'inherit' });
  }
  const tmp = path.join(scratch, 'tmp');
  const rows = [];
  let server: Started | undefined;
  try {
    const runs: { firstAnswerS: number; cpuS: number; rssAtAnswerMb: number; rssIdleMb: number }[] = [];
    for (let run = 1; run <= Number(args.runs); run++) {
      // An empty TMPDIR each time: nothing of an earlier start is there.
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      server?.stop();
      server = await startServer(cwd, { ...process.env, TMPDIR: tmp });
      const idle = await idleRss(server.pid, Number(args.idle) * 1000);
      runs.push({
        firstAnswerS: server.firstAnswerMs / 1000,
        cpuS: server.cpuS,
        rssAtAnswerMb: server.rssAtAnswerMb,
        rssIdleMb: idle.serverMb,
      });
      process.stdout.write(`run ${run}: ${JSON.stringify(runs.at(-1))}\n`);
    }
    const worst = (read: (run: (typeof runs)[number]) => number) => Math.max(...runs.map(read));
    const median = (read: (run: (typeof runs)[number]) => number) =>
      runs.map(read).sort((a, b) => a - b)[Math.floor(runs.length / 2)] ?? Number.NaN;
    const both = (read: (run: (typeof runs)[number]) => number, unit: string, digits: number) =>
      `${median(read).toFixed(digits)} ${unit} (worst ${worst(read).toFixed(digits)})`;
    rows.push(
      {
        measure: `first answer of GET /brands, ${runs.length} runs`,
        value: both((r) => r.firstAnswerS, 's', 2),
        target: '≤ 5 s',
      },
      { measure: 'CPU time until the first answer, all processes', value: both((r) => r.cpuS, 's', 2), target: '' },
      {
        measure: 'RSS of the server at its first answer',
        value: both((r) => r.rssAtAnswerMb, 'MB', 0),
        target: '≤ 300 MB',
      },
      {
        measure: `RSS of the server after ${args.idle} s idle`,
        value: both((r) => r.rssIdleMb, 'MB', 0),
        target: '≤ 300 MB',
      },
    );
    const url = `http://127.0.0.1:${server?.port}/partner/v1/brands/chicken-house/reviews`;
    const headers = { 'x-partner-api-key': DEMO_KEYS.active };
    await autocannon({ url, headers, connections: 16, duration: 2 });
    const load = await autocannon({ url, headers, connections: 16, duration: Number(args.duration) });
    if (load.non2xx || load.errors) throw new Error(`${load.non2xx} non-2xx, ${load.errors} errors under load`);
    rows.push({
      measure: 'demo reviews list, max',
      value: `${whole(load.requests.average)} req/s, p50 ${load.latency.p50} / p99 ${load.latency.p99} ms`,
      target: '≥ 500 req/s',
    });
    const version = execFileSync(args['server-node'] ?? 'node', ['--version'], { cwd, encoding: 'utf8' }).trim();
    const machine = {
      command: args.command ?? 'npm start',
      node: version,
      clone: args.clone,
      loadAverage: loadavg()
        .map((n) => n.toFixed(1))
        .join(' '),
    };
    const table = markdownTable(rows);
    process.stdout.write(
      `${machine.command} on ${version}${args.clone ? ', fresh clone' : ''}, load average ${machine.loadAverage}\n\n${table}\n`,
    );
    const file = path.join(RESULTS, `start-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(file, `${JSON.stringify({ machine, rows, table }, null, 2)}\n`);
    process.stdout.write(`\nsaved ${path.relative(process.cwd(), file)}\n`);
  } finally {
    server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
