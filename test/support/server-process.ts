import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The compiled form of a source file, as `npm start` and `npm run <command>` run it (dist/): the suite builds
 * dist/ in its global setup, before any file runs.
 */
export function built(source: string): string {
  return path.join(ROOT, 'dist', source.replace(/\.ts$/, '.js'));
}

/** A server process started by a test, with the JSON lines of its log (stdout) as they come. */
export type LoggedProcess = {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  /** The exit code, once the process exited and its stdout was read to the end. */
  exited: Promise<number | null>;
  /** The first line whose `msg` is `msg`, as soon as it is read; rejects if the process exits without it. */
  logged(msg: string): Promise<Record<string, unknown>>;
};

/** Starts `command args`; stdout is read as the server's log, one JSON object a line. */
export function spawnLogged(command: string, args: string[], options: SpawnOptions): LoggedProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  const lines: Record<string, unknown>[] = [];
  const waiting = new Set<() => void>();
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    for (const check of waiting) check();
  });
  // After 'exit', stdout may still hold lines: 'close' comes once it is read to the end, so a test that
  // awaited `exited` reads every line the process wrote.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const logged = (msg: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const line = lines.find((candidate) => candidate.msg === msg);
        if (!line) return;
        waiting.delete(check);
        resolve(line);
      };
      waiting.add(check);
      check();
      void exited.then((code) => {
        check();
        if (waiting.delete(check)) reject(new Error(`the process exited (${code}) without logging "${msg}"`));
      });
    });
  return { child, lines, exited, logged };
}

/** The server's `listening` line, as soon as it is logged; rejects if the process exits first. */
export async function listeningLine(started: Pick<LoggedProcess, 'logged'>) {
  return (await started.logged('listening')) as Record<string, unknown> & { base: string };
}
