import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { DRIVER, openTestDatabase } from './support/database';

// D-17/D-20: SIGTERM under keep-alive load. The real server process (as `npm start`
// runs it, on the test database when TEST_DATABASE_URL is set, else the embedded default) is stopped
// while ten keep-alive clients call it: no call that reached it fails, it answers with Connection: close,
// stops accepting, closes the database and exits 0.
let databaseUrl: string | undefined;
beforeAll(async () => {
  databaseUrl = (await openTestDatabase()).url;
});

describe(`SIGTERM under keep-alive load (${DRIVER})`, () => {
  it('answers every call in flight, closes the database and exits 0', { timeout: 90_000 }, async () => {
    const root = path.resolve(import.meta.dirname, '..');
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '1000000',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await expect.poll(() => lines.find((line) => line.msg === 'listening'), { timeout: 60_000 }).toBeDefined();
    const base = String(lines.find((line) => line.msg === 'listening')?.base);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    const outcome = { ok: 0, closing: 0, refused: 0, failed: [] as string[] };
    const get = () =>
      new Promise<void>((resolve) => {
        const request = http.get(
          `${base}/partner/v1/brands/chicken-house/shops`,
          { agent, headers: { 'x-partner-api-key': DEMO_KEYS.active } },
          (response) => {
            response.resume();
            response.on('end', () => {
              if (response.statusCode === 200) outcome.ok += 1;
              else outcome.failed.push(`status ${response.statusCode}`);
              if (response.headers.connection === 'close') outcome.closing += 1;
              resolve();
            });
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) => {
          // After the drain starts, a new connection is refused: the balancer's cue, not a failed call.
          if (error.code === 'ECONNREFUSED') outcome.refused += 1;
          else outcome.failed.push(error.code ?? error.message);
          resolve();
        });
      });
    let stopping = false;
    const client = async () => {
      // Each client calls until its connection is refused, bounded in count.
      for (let i = 0; i < 5_000 && outcome.refused === 0; i++) {
        await get();
        if (stopping && outcome.refused > 0) break;
      }
    };
    const clients = Array.from({ length: 10 }, client);
    await expect.poll(() => outcome.ok, { timeout: 20_000 }).toBeGreaterThan(100);
    const okBefore = outcome.ok;
    stopping = true;
    child.kill('SIGTERM');
    await Promise.all(clients);
    agent.destroy();
    const code = await exited;

    expect(outcome.failed).toEqual([]);
    expect(outcome.refused).toBeGreaterThan(0);
    expect(outcome.closing).toBeGreaterThan(0);
    // It did not go on serving old connections: the drain is short, not thousands of calls long.
    expect(outcome.ok - okBefore).toBeLessThan(500);
    expect(lines.find((line) => line.msg === 'stopped')).toMatchObject({ drained: true, database: 'closed' });
    expect(code).toBe(0);
  });
});
