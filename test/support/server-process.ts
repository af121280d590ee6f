import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { expect } from 'vitest';

/** A server process started by a test, with the JSON lines of its log (stdout) as they come. */
export type LoggedProcess = {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
};

/** Starts `command args`; stdout is read as the server's log, one JSON object a line. */
export function spawnLogged(command: string, args: string[], options: SpawnOptions): LoggedProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

/** The server's `listening` line, once it has logged one. */
export async function listeningLine(lines: Record<string, unknown>[], timeout = 60_000) {
  await expect.poll(() => lines.find((line) => line.msg === 'listening'), { timeout }).toBeDefined();
  return lines.find((line) => line.msg === 'listening') as Record<string, unknown> & { base: string };
}
