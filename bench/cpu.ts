import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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

/**
 * CPU seconds used so far by the processes of a process group, and by the `postgres` processes (only the
 * backends of `database` when given; a backend that ended between two readings is not counted).
 */
export function cpuSeconds(pgid: number, database?: string): { server: number; postgres: number } {
  const used = { server: 0, postgres: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // Fields after the command's closing parenthesis: state ppid pgrp … utime (12th) stime (13th).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
      if (Number(fields[2]) === pgid) used.server += seconds;
      else if (command === 'postgres') {
        // A backend's title: "postgres: [cluster: ]user database host(port) state".
        const title = database ? readFileSync(`/proc/${entry}/cmdline`, 'utf8') : '';
        if (!database || title.split(/[\s\0]+/).includes(database)) used.postgres += seconds;
      }
    } catch {}
  }
  return used;
}
