import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { STORE_CLOSE_RESERVE_MS } from '../server/config';
import { DRIVER, openTestDatabase } from './support/database';
import { startFaultProxy } from './support/fault-proxy';
import { built, listeningLine, spawnLogged } from './support/server-process';

// D-17/D-20: SIGTERM under keep-alive load. The real server process (as `npm start`
// runs it, on the test database when TEST_DATABASE_URL is set, else the embedded default) is stopped
// while ten keep-alive clients call it: every call it received is answered, with Connection: close from
// the signal on; it stops accepting, closes the database and exits 0. A connection idle at the signal is
// closed (a connection just opened, its first call not yet read, is idle too); a client whose call was on its
// way on it sees a reset before any byte of an answer and retries the GET, as the balancer does (D-20): each
// call carries its own request id, so the test knows that no reset call reached the app. One more keep-alive client holds a call
// half-sent across the signal, so a call the server received before it is answered after it, whatever the
// ten clients happened to be doing at that instant.
let databaseUrl: string | undefined;

/** The real server process, as `npm start` runs it, with its JSON log lines as they come. */
async function startServerProcess(env: Record<string, string>) {
  const root = path.resolve(import.meta.dirname, '..');
  const started = spawnLogged(process.execPath, [built('server/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '1000000', ...env },
  });
  const base = String((await listeningLine(started)).base);
  return { ...started, base };
}
const SHOPS = '/partner/v1/brands/chicken-house/shops';

/** The status and headers of each HTTP/1.1 answer in `raw`, with whether the last one is complete. */
function answersIn(raw: Buffer) {
  const answers: { status: number; headers: Record<string, string> }[] = [];
  let rest = raw;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return { answers, complete: rest.length === 0 };
    const [statusLine = '', ...fields] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      fields.map((field) => [
        field.slice(0, field.indexOf(':')).toLowerCase(),
        field.slice(field.indexOf(':') + 1).trim(),
      ]),
    );
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) return { answers, complete: false };
    answers.push({ status: Number(statusLine.split(' ')[1]), headers });
    rest = rest.subarray(end + 4 + length);
  }
}

/**
 * A keep-alive connection on which one call is answered and the next is half-sent: the request line and
 * headers without the blank line that ends them. Both go in one write, so by the time the first answer
 * arrives the server has read the start of the second call, and the connection is not idle: a drain must
 * wait for that call, not close it. `finish()` sends the blank line; `answers` resolves when it closes.
 */
async function halfSentCall(base: string) {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  let raw = Buffer.alloc(0);
  const request = `GET ${SHOPS} HTTP/1.1\r\nHost: ${url.host}\r\nx-partner-api-key: ${DEMO_KEYS.active}\r\n`;
  const firstAnswered = new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      raw = Buffer.concat([raw, chunk]);
      if (answersIn(raw).answers.length >= 1) resolve();
    }),
  );
  const answers = new Promise<ReturnType<typeof answersIn>>((resolve) =>
    socket.on('close', () => resolve(answersIn(raw))),
  );
  socket.on('error', () => undefined);
  socket.write(`${request}\r\n${request}`);
  await firstAnswered;
  return { finish: () => socket.write('\r\n'), answers };
}

beforeAll(async () => {
  databaseUrl = (await openTestDatabase()).url;
});

describe(`SIGTERM under keep-alive load (${DRIVER})`, () => {
  it('answers every call in flight, closes the database and exits 0', { timeout: 90_000 }, async () => {
    const { lines, exited, base, child, logged } = await startServerProcess({
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      // The half-sent call waits for the signal: no headers timeout cuts it first, however slow the machine.
      HEADERS_TIMEOUT_MS: '600000',
    });

    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    const outcome = { ok: 0, closing: 0, refused: 0, failed: [] as string[], reset: [] as string[] };
    let calls = 0;
    let loaded = () => {};
    const underLoad = new Promise<void>((resolve) => {
      loaded = resolve;
    });
    const get = (tries = 3): Promise<void> =>
      new Promise<void>((resolve) => {
        const requestId = `drain-call-${++calls}`;
        const request = http.get(
          `${base}${SHOPS}`,
          { agent, headers: { 'x-partner-api-key': DEMO_KEYS.active, 'x-request-id': requestId } },
          (response) => {
            response.resume();
            response.on('end', () => {
              if (response.statusCode === 200) outcome.ok += 1;
              else outcome.failed.push(`status ${response.statusCode}`);
              if (outcome.ok === 100) loaded();
              if (response.headers.connection === 'close') outcome.closing += 1;
              resolve();
            });
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) => {
          // After the drain starts, a new connection is refused: the balancer's cue, not a failed call.
          if (error.code === 'ECONNREFUSED') outcome.refused += 1;
          else if (error.code === 'ECONNRESET' && tries > 1) {
            // Reset before any byte of an answer: retried, and checked below never to have reached the app.
            outcome.reset.push(requestId);
            return void get(tries - 1).then(resolve);
          } else outcome.failed.push(error.code ?? error.message);
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
    await underLoad;
    const held = await halfSentCall(base);
    const okBefore = outcome.ok;
    stopping = true;
    child.kill('SIGTERM');
    // The drain has begun (the server logs this line just before it): the held call now reaches the app.
    await logged('draining');
    held.finish();
    await Promise.all(clients);
    agent.destroy();
    const code = await exited;

    const answered = await held.answers;
    expect(answered).toMatchObject({ complete: true, answers: [{ status: 200 }, { status: 200 }] });
    expect(answered.answers[0]?.headers.connection).not.toBe('close');
    expect(answered.answers[1]?.headers.connection).toBe('close');
    outcome.ok += 2;
    outcome.closing += 1;
    expect(outcome.failed).toEqual([]);
    // A call the server read was answered: no reset call has an access line.
    const received = new Set(lines.filter((line) => line.msg === 'request').map((line) => line.requestId));
    expect(outcome.reset.filter((requestId) => received.has(requestId))).toEqual([]);
    expect(outcome.refused).toBeGreaterThan(0);
    expect(outcome.closing).toBeGreaterThan(0);
    // It did not go on serving old connections: the drain is short, not thousands of calls long.
    expect(outcome.ok - okBefore).toBeLessThan(500);
    expect(lines.find((line) => line.msg === 'stopped')).toMatchObject({ drained: true, database: 'closed' });
    expect(code).toBe(0);
  });
});

// D-20: the drain time bounds the whole shutdown and covers a call at its deadline. With PostgreSQL
// stalled (the fault proxy holds every byte), calls started well before and just before SIGTERM are still
// in flight at the signal: /readyz says 503 at once on a connection already open, each call gets its 500
// at its deadline, closing the database (which cannot finish) gets what is left, and the process exits 0.
describe.skipIf(DRIVER !== 'postgres')('SIGTERM with the database stalled (D-20, D-21)', () => {
  it('answers every call in flight by its deadline, /readyz 503, and exits 0 within the drain time', {
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
    const deadlineMs = 3_000;
    // The drain time by default: the deadline, the stores' reserve and room to spare.
    const { lines, exited, base, child, logged } = await startServerProcess({
      ...(redisUrl ? { REDIS_URL: redisUrl.toString() } : {}),
      DATABASE_URL: proxied.toString(),
      REQUEST_DEADLINE_MS: String(deadlineMs),
    });
    try {
      const port = Number(new URL(base).port);
      proxy.pause();
      redisProxy?.pause();
      const call = () =>
        fetch(`${base}/partner/v1/brands/chicken-house/shops`, {
          headers: { 'x-partner-api-key': DEMO_KEYS.active },
        }).then(async (response) => ({ status: response.status, body: await response.json() }));
      const early = call();
      await new Promise((resolve) => setTimeout(resolve, deadlineMs / 2));
      const late = call();
      // A connection a balancer already holds, on which it asks for readiness after the signal.
      const probe = net.connect(port, '127.0.0.1');
      let answer = '';
      const answered = new Promise<void>((resolve) =>
        probe.on('data', (chunk) => {
          answer += chunk;
          if (/\r\n\r\n\{.*\}$/.test(answer)) resolve();
        }),
      );
      await new Promise((resolve) => probe.once('connect', resolve));
      const signalled = Date.now();
      child.kill('SIGTERM');
      const drainMs = Number((await logged('draining')).drainMs);
      expect(drainMs).toBeGreaterThan(deadlineMs + STORE_CLOSE_RESERVE_MS);
      probe.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered;
      expect(answer).toMatch(/^HTTP\/1\.1 503 /);
      expect(answer.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ status: 'draining' });

      // Each call in flight gets its answer: the 500 envelope at its deadline, the database being stalled.
      for (const answered of await Promise.all([early, late]))
        expect(answered).toMatchObject({ status: 500, body: { status: 'PARTNER_API_INTERNAL_ERROR' } });
      expect(await exited).toBe(0);
      // Generous: the point is "within the drain time", not a stopwatch.
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
