import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../../db/seed/demo';
import { createApp } from '../../server/app';
import { parseConfig } from '../../server/config';
import { createHttpServer } from '../../server/http-server';
import { silentLogger } from '../../server/logger';
import { createServices } from '../../server/services';
import { NOW, openTestDatabase } from '../support/database';
import { startServer, testServices } from '../support/services';

// D-16 as a partner meets it: `npm pack ./sdk` (its prepack builds it), installed into a fresh project
// (test/sdk/consumer) that has nothing else, compiled there with skipLibCheck false (its @ts-expect-error
// lines must still be errors), and its calls run against a live server on the test database.

const execFileAsync = promisify(execFile);

/** A command's output; when it fails, the error says why (npm prints a failed build's errors on stdout). */
async function run(command: string, args: string[], options: { cwd?: string } = {}) {
  try {
    return await execFileAsync(command, args, options);
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`);
  }
}
const ROOT = path.resolve(import.meta.dirname, '../..');
const BRAND = 'chicken-house';

/** What test/sdk/consumer/src/consumer.ts exports, as this file calls it (it is compiled apart). */
type Options = { baseUrl: string; apiKey: string; retries?: number };
type Failure = { code: string; status: number; requestId: string | undefined; retryAfter: number | undefined };
type Consumer = {
  reviewsRatedAtLeast(
    options: Options,
    brand: string,
    min: number,
  ): Promise<{ review_id: string; rating: number | null }[]>;
  failureOf(options: Options, brand: string): Promise<Failure | undefined>;
  brandCodes(options: Options): Promise<string[]>;
  everyReview(options: Options, brand: string, limit: number): Promise<string[]>;
  everyShop(options: Options, brand: string, limit: number): Promise<string[]>;
};

let work: string;
let installed: string[];
let compiled: { ok: true } | { ok: false; output: string };
let consumer: Consumer;
let api: Awaited<ReturnType<typeof startServer>>;
let options: Options;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'partner-sdk-'));
  const packed = await run('npm', ['pack', './sdk', '--pack-destination', work], { cwd: ROOT });
  const tarball = path.join(work, packed.stdout.trim().split('\n').at(-1) ?? '');
  const project = path.join(work, 'project');
  await cp(path.join(ROOT, 'test/sdk/consumer'), project, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|dist)$/.test(source),
  });
  // The package has no dependencies, so this works offline; --prefer-offline keeps it so if one is added.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project });
  installed = await readdir(path.join(project, 'node_modules'));
  try {
    await run(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', project]);
    compiled = { ok: true };
  } catch (error) {
    compiled = { ok: false, output: String(error) };
  }
  if (compiled.ok) consumer = await import(pathToFileURL(path.join(project, 'dist/consumer.js')).href);

  const database = await openTestDatabase();
  api = await startServer(testServices(database.db, { RATE_LIMIT_PER_MINUTE: '100000' }));
  options = { baseUrl: api.base, apiKey: DEMO_KEYS.active };
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed SDK in a partner project', () => {
  it('installs alone (no server dependencies) and compiles with skipLibCheck false; every mistake line is a type error', () => {
    expect(installed.filter((name) => !name.startsWith('.'))).toEqual(['@partner-reporting']);
    expect(compiled).toEqual({ ok: true });
  });

  it('filters: rating_min=4 answers only reviews rated 4 or more, the same ones as REST', async () => {
    const reviews = await consumer.reviewsRatedAtLeast(options, BRAND, 4);
    expect(reviews.length).toBeGreaterThan(0);
    for (const { rating } of reviews) expect(Math.floor(rating ?? 0)).toBeGreaterThanOrEqual(4);
    const rest = await api.request(`/partner/v1/brands/${BRAND}/reviews?rating_min=4&limit=100`, {
      key: DEMO_KEYS.active,
    });
    const restIds = (rest.body as unknown as { data: { items: { review_id: string }[] } }).data.items.map(
      (r) => r.review_id,
    );
    expect(reviews.map((review) => review.review_id)).toEqual(restIds);
  });

  it('rejects with PartnerApiError: the partner code, the status and the response x-request-id', async () => {
    const otherPartners = await consumer.failureOf(options, 'burger-town');
    expect(otherPartners).toMatchObject({ code: 'PARTNER_API_BRAND_NOT_FOUND', status: 404 });
    expect(otherPartners?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const expired = await consumer.failureOf({ ...options, apiKey: DEMO_KEYS.expired }, BRAND);
    expect(expired).toMatchObject({ code: 'PARTNER_API_KEY_EXPIRED', status: 401 });
    expect(expired?.requestId).not.toBe(otherPartners?.requestId);
  });

  it('paginates every review over several pages, each once, in the order of any page size', async () => {
    const bySeven = await consumer.everyReview(options, BRAND, 7);
    expect(bySeven.length).toBeGreaterThan(7 * 3);
    expect(new Set(bySeven).size).toBe(bySeven.length);
    expect(await consumer.everyReview(options, BRAND, 100)).toEqual(bySeven);
  });

  it('paginates a list without cursors (shops) page by page', async () => {
    const byTwo = await consumer.everyShop(options, BRAND, 2);
    expect(byTwo.length).toBeGreaterThan(2);
    expect(await consumer.everyShop(options, BRAND, 100)).toEqual(byTwo);
  });
});

describe('the packed SDK against the rate limit (D-14, D-16)', () => {
  it('retries a 429 after its Retry-After, and with retries: 0 throws it', async () => {
    // One call a minute, on a clock half a second before a window ends: the second call is refused with
    // Retry-After: 1. The server's clock moves on by what a 429 asks the client to wait (so the test
    // waits one real second, not a minute); the client's own wait is measured in real time.
    const windowEnd = Math.floor(NOW.getTime() / 60_000) * 60_000 + 60_000;
    let now = windowEnd - 500;
    const database = await openTestDatabase();
    const services = createServices(
      parseConfig({ RATE_LIMIT_PER_MINUTE: '1' }),
      database.db,
      silentLogger,
      () => new Date(now),
    );
    const seen: { status: number; retryAfter: string | undefined; started: number; finished: number }[] = [];
    const app = express();
    app.use((_req, res, next) => {
      const started = performance.now();
      res.on('finish', () => {
        const retryAfter = res.getHeader('Retry-After')?.toString();
        seen.push({ status: res.statusCode, retryAfter, started, finished: performance.now() });
        if (res.statusCode === 429) now += Number(retryAfter) * 1000;
      });
      next();
    });
    app.use(createApp(services));
    const server: Server = createHttpServer(app, silentLogger).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const limited = { ...options, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    try {
      const brands = await consumer.brandCodes(limited);
      expect(await consumer.brandCodes(limited)).toEqual(brands);
      expect(seen.map(({ status, retryAfter }) => [status, retryAfter])).toEqual([
        [200, undefined],
        [429, '1'],
        [200, undefined],
      ]);
      const [, refused, retried] = seen;
      expect((retried?.started ?? 0) - (refused?.finished ?? 0)).toBeGreaterThanOrEqual(1000);

      await expect(consumer.brandCodes({ ...limited, retries: 0 })).rejects.toMatchObject({
        code: 'PARTNER_API_RATE_LIMITED',
        status: 429,
        requestId: expect.any(String),
        retryAfter: expect.any(Number),
      });
      expect(seen).toHaveLength(4);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
