import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

// CPU per call: where a call's cost is paid, the server process or PostgreSQL (the brief's "what stands in
// the way"). Read from /proc: the server's process group, and the PostgreSQL backends (of one database
// when named: other clients of the same server are not the bench's).

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

type Role = 'server' | 'postgres';

/** The processes of a process group, and the `postgres` processes (only `database`'s backends when given). */
function processes(pgid: number, database?: string): { pid: number; role: Role; seconds: number }[] {
  const found: { pid: number; role: Role; seconds: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // Fields after the command's closing parenthesis: state ppid pgrp … utime (12th) stime (13th).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
      if (Number(fields[2]) === pgid) found.push({ pid: Number(entry), role: 'server', seconds });
      else if (command === 'postgres') {
        // A backend's title: "postgres: [cluster: ]user database host(port) state".
        const title = database ? readFileSync(`/proc/${entry}/cmdline`, 'utf8') : '';
        if (!database || title.split(/[\s\0]+/).includes(database))
          found.push({ pid: Number(entry), role: 'postgres', seconds });
      }
    } catch {}
  }
  return found;
}

/**
 * CPU seconds used so far by the processes of a process group, and by the `postgres` processes (only the
 * backends of `database` when given; a backend that ended between two readings is not counted).
 */
export function cpuSeconds(pgid: number, database?: string): { server: number; postgres: number } {
  const used = { server: 0, postgres: 0 };
  for (const { role, seconds } of processes(pgid, database)) used[role] += seconds;
  return used;
}

/**
 * User-space instructions the server and `database`'s backends execute while `work` runs, counted by
 * `perf stat`: unlike CPU time, the count does not move with the machine's other load. Undefined where
 * perf cannot count (not installed, not permitted, or a machine without hardware counters).
 */
export async function instructionsDuring<T>(
  pgid: number,
  database: string,
  work: () => Promise<T>,
): Promise<{ result: T; instructions?: { server: number; postgres: number } }> {
  const found = processes(pgid, database);
  const counters = (['server', 'postgres'] as const).map((role) => {
    const pids = found.filter((process) => process.role === role).map(({ pid }) => pid);
    const perf = spawn('perf', ['stat', '-x,', '-e', 'instructions:u', '-p', pids.join(',')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let report = '';
    perf.stderr.on('data', (chunk) => {
      report += chunk;
    });
    perf.on('error', () => {});
    const ended = new Promise<number>((resolve) => {
      perf.on('close', () => resolve(Number(report.trim().split('\n').at(-1)?.split(',')[0])));
    });
    return { perf, ended };
  });
  // perf attaches after it starts: a moment before the work, so none of it goes uncounted.
  await delay(300);
  const result = await work();
  for (const { perf } of counters) perf.kill('SIGINT');
  const [server, postgres] = await Promise.all(counters.map(({ ended }) => ended));
  if (!Number.isFinite(server) || !Number.isFinite(postgres)) return { result };
  return { result, instructions: { server: server as number, postgres: postgres as number } };
}
