import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { DEMO_KEYS } from '../db/seed/demo';
import { markdownTable, whole } from './lib';

// npm run bench:start [-- --server-node BIN]: the embedded default as a partner first meets it:
// `npm start` (PGlite, demo data) until its first answer, RSS once idle, then the demo reviews list under
// autocannon (16 connections, loopback). Targets: first answer ≤ 5 s, RSS ≤ 250 MB idle, ≥ 500 req/s.

const { values: args } = parseArgs({
  options: { 'server-node': { type: 'string' }, duration: { type: 'string', default: '8' } },
});

/** RSS in MB of each process of a process group, with its command line. */
function groupRss(pgid: number) {
  const found: { pid: number; rssMb: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      found.push({ pid: Number(entry), rssMb: Number(rss ?? 0) / 1024, command });
    } catch {}
  }
  return found;
}

async function main() {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  const [command, ...argv] = args['server-node']
    ? [args['server-node'], path.resolve('node_modules/tsx/dist/cli.mjs'), 'server/main.ts']
    : ['npm', 'run', '-s', 'start'];
  const started = performance.now();
  const child = spawn(command ?? 'npm', argv, {
    // A limit far above the load, so the limiter decides but never refuses.
    env: { ...process.env, PORT: String(port), DATABASE_URL: '', REDIS_URL: '', RATE_LIMIT_PER_MINUTE: '1000000' },
    detached: true,
    stdio: 'ignore',
  });
  const stop = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
    } catch {}
  };
  process.on('SIGINT', () => {
    stop();
    process.exit(130);
  });
  try {
    const url = `http://127.0.0.1:${port}/partner/v1/brands/chicken-house/reviews`;
    const headers = { 'x-partner-api-key': DEMO_KEYS.active };
    let firstAnswerMs = Number.NaN;
    while (performance.now() - started < 60_000) {
      if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}`);
      const ok = await fetch(url, { headers }).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) {
        firstAnswerMs = performance.now() - started;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!Number.isFinite(firstAnswerMs)) throw new Error('no answer within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idle = groupRss(child.pid ?? 0);
    // The server is the biggest process of the group (npm, sh and tsx's launcher are small beside it).
    const server = idle.reduce<(typeof idle)[number] | undefined>(
      (big, p) => (big && big.rssMb >= p.rssMb ? big : p),
      undefined,
    );
    const version = await new Promise<string>((resolve) => {
      const v = spawn(args['server-node'] ?? 'node', ['--version']);
      let out = '';
      v.stdout.on('data', (chunk) => {
        out += chunk;
      });
      v.on('exit', () => resolve(out.trim()));
    });
    await autocannon({ url, headers, connections: 16, duration: 2 });
    const load = await autocannon({ url, headers, connections: 16, duration: Number(args.duration) });
    const rows = [
      { measure: 'first answer after start', value: `${(firstAnswerMs / 1000).toFixed(2)} s`, target: '≤ 5 s' },
      {
        measure: 'RSS idle, server process',
        value: `${whole(server?.rssMb ?? Number.NaN)} MB`,
        target: '≤ 250 MB',
      },
      {
        measure: 'RSS idle, all processes of npm start',
        value: `${whole(idle.reduce((sum, p) => sum + p.rssMb, 0))} MB (${idle.map((p) => `${p.command.split(' ')[0]?.split('/').pop()} ${whole(p.rssMb)}`).join(', ')})`,
        target: '',
      },
      {
        measure: 'demo reviews list, max',
        value: `${whole(load.requests.average)} req/s, p50 ${load.latency.p50} / p99 ${load.latency.p99} ms`,
        target: '≥ 500 req/s',
      },
    ];
    if (load.non2xx || load.errors) throw new Error(`${load.non2xx} non-2xx, ${load.errors} errors under load`);
    process.stdout.write(`npm start on ${version}\n\n${markdownTable(rows)}\n`);
  } finally {
    stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
