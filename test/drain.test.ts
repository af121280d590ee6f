import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { DRIVER, openTestDatabase } from './support/database';
import { startFaultProxy } from './support/fault-proxy';
import { listeningLine, spawnLogged } from './support/server-process';

// D-17/D-20: SIGTERM under keep-alive load. The real server process (as `npm start`
// runs it, on the test database when TEST_DATABASE_URL is set, else the embedded default) is stopped
// while ten keep-alive clients call it: no call that reached it fails, it answers with Connection: close,
// stops accepting, closes the database and exits 0.
let databaseUrl: string | undefined;

/** The real server process, as `npm start` runs it, with its JSON log lines as they come. */
async function startServerProcess(env: Record<string, string>) {
  const root = path.resolve(import.meta.dirname, '..');
  const started = spawnLogged(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '1000000', ...env },
  });
  const base = String((await listeningLine(started.lines)).base);
  return { ...started, base };
}
beforeAll(async () => {
  databaseUrl = (await openTestDatabase()).url;
});

describe(`SIGTERM under keep-alive load (${DRIVER})`, () => {
  it('answers every call in flight, closes the database and exits 0', { timeout: 90_000 }, async () => {
    const { lines, exited, base, child } = await startServerProcess({
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });

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

// D-20/D-21: the drain time bounds the whole shutdown. With PostgreSQL stalled (the fault proxy holds
// every byte), a request is still in flight when SIGTERM comes: /readyz says 503 at once on a connection
// already open, the slow request is answered by its deadline, and closing the database, which cannot
// finish, gets only what is left of the drain time.
describe.skipIf(DRIVER !== 'postgres')('SIGTERM with the database stalled (D-20, D-21)', () => {
  it('answers /readyz 503 while a request is in flight and exits within the drain time', {
    timeout: 90_000,
  }, async () => {
    const target = new URL(databaseUrl ?? '');
    const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const proxied = new URL(target);
    proxied.port = String(proxy.port);
    // With Redis, the shared limiter's store is stalled too.
    const redisTarget = process.env.TEST_REDIS_URL ? new URL(process.env.TEST_REDIS_URL) : undefined;
    const redisProxy = redisTarget
      ? await startFaultProxy({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) })
      : undefined;
    const redisUrl = redisTarget && redisProxy ? new URL(redisTarget) : undefined;
    if (redisUrl && redisProxy) redisUrl.port = String(redisProxy.port);
    const drainMs = 4_000;
    const { lines, exited, base, child } = await startServerProcess({
      ...(redisUrl ? { REDIS_URL: redisUrl.toString() } : {}),
      DATABASE_URL: proxied.toString(),
      REQUEST_DEADLINE_MS: '3000',
      DRAIN_TIMEOUT_MS: String(drainMs),
    });
    try {
      const port = Number(new URL(base).port);
      proxy.pause();
      redisProxy?.pause();
      const slow = fetch(`${base}/partner/v1/brands/chicken-house/shops`, {
        headers: { 'x-partner-api-key': DEMO_KEYS.active },
      }).then(async (response) => ({ status: response.status, body: await response.json() }));
      // A connection a balancer already holds, on which it asks for readiness after the signal.
      const probe = net.connect(port, '127.0.0.1');
      let answer = '';
      probe.on('data', (chunk) => {
        answer += chunk;
      });
      await new Promise((resolve) => probe.once('connect', resolve));
      const signalled = Date.now();
      child.kill('SIGTERM');
      await expect.poll(() => lines.find((line) => line.msg === 'draining'), { timeout: 5_000 }).toBeDefined();
      probe.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
      await expect.poll(() => answer, { timeout: 5_000 }).toMatch(/\r\n\r\n\{.*\}$/);
      expect(answer).toMatch(/^HTTP\/1\.1 503 /);
      expect(answer.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ status: 'draining' });

      // The request in flight gets its answer (the 500 envelope at its deadline: the database is stalled).
      expect(await slow).toMatchObject({ status: 500, body: { status: 'PARTNER_API_INTERNAL_ERROR' } });
      await exited;
      // Generous: the point is "within the drain time", not a stopwatch. Closing a stalled database on its
      // own terms would add its close timeout after the request's deadline, well past this.
      expect(Date.now() - signalled).toBeLessThan(drainMs + 3_000);
      const stopped = lines.find((line) => line.msg === 'stopped');
      expect(stopped).toMatchObject({ drained: true });
      expect(stopped?.database).toMatch(/timed out|closed/);
      expect(stopped?.limiter).toMatch(redisProxy ? /timed out|closed/ : /in-process/);
      probe.destroy();
    } finally {
      for (const stalled of [proxy, redisProxy]) {
        stalled?.restore();
        await stalled?.close();
      }
    }
  });
});
