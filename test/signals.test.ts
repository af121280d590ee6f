import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { DRIVER, openTestDatabase } from './support/database';
import { type LoggedProcess, listeningLine, spawnLogged } from './support/server-process';

// D-24 and D-20: a process manager or container runtime signals the process it started. Whether that is
// npm (`npm start` and `npm run dev`, which exec node) or node itself running the compiled server, SIGTERM
// and SIGINT reach the server: it drains, logs `stopped`, closes its port and exits 0, and so does npm.
const ROOT = path.resolve(import.meta.dirname, '..');
// npm and the server run on the node running this test (the supported one on CI), not the machine's.
const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
let databaseUrl: string | undefined;
/** Processes a failed case could leave behind (a server orphaned by its npm), stopped after each case. */
const started = new Set<number>();

beforeAll(async () => {
  databaseUrl = (await openTestDatabase()).url;
  // The compiled server npm start runs was built from the source under test before any file ran
  // (test/support/global-setup.ts).
});

afterEach(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
  started.clear();
});

type Started = LoggedProcess;

function start(command: string, args: string[]): Started {
  return spawnLogged(command, args, {
    cwd: ROOT,
    env: {
      PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // On PostgreSQL with webhooks on, so the delivery thread starts (and drains) from each way of running.
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64') } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** The PIDs of a process's children (Linux); empty where /proc does not say. */
function childrenOf(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

async function signalAndCheck(server: Started, signal: NodeJS.Signals) {
  const { child, lines, exited } = server;
  const base = String((await listeningLine(server)).base);
  const port = Number(new URL(base).port);
  const answer = await fetch(`${base}/partner/v1/brands`, { headers: { 'x-partner-api-key': DEMO_KEYS.active } });
  expect(answer.status).toBe(200);
  // Delivery runs in a thread of its own on PostgreSQL, on the calls' thread (0) beside the embedded demo.
  const delivering = Number((await server.logged('webhook delivery started')).thread);
  if (databaseUrl) expect(delivering).toBeGreaterThan(0);
  else expect(delivering).toBe(0);
  const servers = childrenOf(child.pid ?? 0);
  for (const pid of [child.pid ?? 0, ...servers]) started.add(pid);

  // The signal goes to the started process's own PID only, never its group.
  child.kill(signal);
  expect(await exited).toBe(0);
  expect(lines.find((line) => line.msg === 'draining')).toMatchObject({ signal });
  expect(lines.find((line) => line.msg === 'stopped')).toMatchObject({ drained: true, database: 'closed' });
  expect(await refused(port)).toBe(true);
  for (const pid of servers) expect(alive(pid), `server process ${pid} outlived npm`).toBe(false);
}

describe(`signals reach the compiled server (${DRIVER})`, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the PID of `npm start` drains the server and exits 0',
    { timeout: 120_000 },
    async (signal) => {
      await signalAndCheck(start('npm', ['start']), signal);
    },
  );

  it('SIGTERM to the PID of `npm run dev` (the TypeScript source through tsx) drains and exits 0', {
    timeout: 120_000,
  }, async () => {
    await signalAndCheck(start('npm', ['run', 'dev']), 'SIGTERM');
  });

  it('SIGTERM to `node dist/server/main.js` drains and exits 0', { timeout: 120_000 }, async () => {
    await signalAndCheck(start(process.execPath, ['dist/server/main.js']), 'SIGTERM');
  });
});
