import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer as createHttpServerPlain, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle, Db } from '../../db/client';
import { brands as brandRows, reviews as reviewRows } from '../../db/schema';
import { DEMO_KEYS } from '../../db/seed/demo';
import { parseConfig } from '../../server/config';
import { createApp } from '../../server/http/app';
import { createHttpServer } from '../../server/http/server';
import { silentLogger } from '../../server/logger';
import { createServices } from '../../server/trpc/services';
import { NOW, openTestDatabase, transactionsSettled } from '../support/database';
import { startServer, testServices } from '../support/services';
import { realDelivery } from '../support/webhook-delivery';

// D-16 as a partner meets it: the SDK built and packed (`npm pack ./sdk`), installed into a fresh project
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
type Options = { baseUrl: string; apiKey: string; retries?: number; retryDelayMs?: number; timeoutMs?: number };
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
  brandsUntil(
    options: Options,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<'answered' | { name: string; code: string }>;
  reviewPage(
    options: Options,
    brand: string,
    limit: number,
    cursor?: string,
    requestId?: string,
  ): Promise<{
    ids: string[];
    nextCursor: string | undefined;
    rateLimit: { limit: number; remaining: number; resetSeconds: number } | undefined;
    requestId: string | undefined;
  }>;
  reviewsFrom(
    options: Options,
    brand: string,
    limit: number,
    cursor: string,
  ): Promise<{ ids: string[]; checkpoints: (string | undefined)[] }>;
  weekStarts(options: Options, brand: string): Promise<string[]>;
  verifiedEvent(
    secret: string,
    body: string,
    headers: Record<string, string>,
  ): { type: string; data: Record<string, unknown> } | { error: string; isVerificationError: boolean };
  reviewChanges(
    options: Options,
    brand: string,
    limit: number,
    cursor?: string,
    stopAfter?: number,
  ): Promise<{ changes: Change[]; cursor: string | undefined }>;
  cachedReads(
    options: Options,
    brand: string,
    cursor: string,
  ): Promise<{
    statuses: number[];
    same: boolean;
    remaining: (number | undefined)[];
    polls: string[];
    cursor: string | undefined;
  }>;
  expiredFeed(
    options: Options,
    brand: string,
    cursor: string,
  ): Promise<{ name: string; code: string; status: number; isPartnerApiError: boolean } | undefined>;
};
type Change = { review_id: string; change: 'UPSERT' | 'DELETE'; review: { review_id: string } | null };

/**
 * The TypeScript examples of sdk/README.md as one module of the partner project, so the guide a partner
 * copies from compiles against the package it describes. The examples are fragments of one story (later
 * ones use the earlier `client` and `brand_code`); what they take from outside is declared first. A line
 * whose comment says `// error:` shows a mistake the types refuse, so it must stay a type error.
 */
function readmeModule(readme: string): string {
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  if (blocks.length === 0) throw new Error('sdk/README.md has no ```ts examples');
  const lines = blocks
    .join('\n')
    .split('\n')
    .flatMap((line) =>
      /\/\/ error:/.test(line) ? ['// @ts-expect-error the README shows this mistake', line] : [line],
    );
  return [
    '// Generated by test/sdk/consumer.test.ts from sdk/README.md.',
    'declare const process: { env: Record<string, string | undefined> };',
    'declare const console: { log(...values: unknown[]): void };',
    'declare const review_id: string;',
    "declare const AbortController: new () => { readonly signal: import('@partner-reporting/sdk').AbortSignalLike; abort(reason?: unknown): void };",
    'declare function setTimeout(callback: () => void, ms: number): unknown;',
    ...lines,
    'export {};',
    '',
  ].join('\n');
}

let work: string;
let tarball: string;
let project: string;
let installed: string[];
let compiled: { ok: true } | { ok: false; output: string };
let quickStart: { ok: true } | { ok: false; output: string };
let consumer: Consumer;
let api: Awaited<ReturnType<typeof startServer>>;
let options: Options;
let db: Db;
let database: DatabaseHandle;

/** The server on its database copy, for the partner project's calls. */
async function serve() {
  database = await openTestDatabase();
  db = database.db;
  api = await startServer(testServices(database.db, { RATE_LIMIT_PER_MINUTE: '100000' }));
  options = { baseUrl: api.base, apiKey: DEMO_KEYS.active };
}

/**
 * The README's quick start as written, in a new project set up as the README says: its tsconfig.json, the
 * packed SDK as `npm install` put it in the partner project, and @types/node from this repository, offline.
 */
async function compileQuickStart(): Promise<{ ok: true } | { ok: false; output: string }> {
  try {
    const readme = await readFile(path.join(ROOT, 'sdk/README.md'), 'utf8');
    const example = /## Quick start\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const tsconfig = /```json\n([\s\S]*?)```/.exec(readme)?.[1];
    if (!example || !tsconfig) throw new Error('sdk/README.md lost its quick start or its tsconfig.json');
    const fresh = path.join(work, 'fresh');
    await mkdir(path.join(fresh, 'src'), { recursive: true });
    await writeFile(path.join(fresh, 'package.json'), JSON.stringify({ name: 'fresh', type: 'module' }));
    await writeFile(path.join(fresh, 'tsconfig.json'), tsconfig);
    await writeFile(path.join(fresh, 'src/index.ts'), example);
    // What `npm install` put there: the packed SDK, and @types/node (with its one dependency) from this
    // repository's own install, offline.
    await cp(
      path.join(project, 'node_modules/@partner-reporting'),
      path.join(fresh, 'node_modules/@partner-reporting'),
      {
        recursive: true,
      },
    );
    await mkdir(path.join(fresh, 'node_modules/@types'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules/@types/node'), path.join(fresh, 'node_modules/@types/node'));
    await symlink(path.join(ROOT, 'node_modules/undici-types'), path.join(fresh, 'node_modules/undici-types'));
    await run(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', fresh]);
    return { ok: true };
  } catch (error) {
    return { ok: false, output: String(error) };
  }
}

/** The SDK packed, installed into a copy of the partner project, and the project compiled against it. */
async function packInstallCompile() {
  work = await mkdtemp(path.join(tmpdir(), 'partner-sdk-'));
  // The package's prepack is the generated types' check, then the build: the check is
  // test/sdk/types.test.ts's rule, so here the build runs alone and `npm pack` packs what it wrote.
  await run(process.execPath, [path.join(ROOT, 'sdk/scripts/build.mjs')], { cwd: ROOT });
  const packed = await run('npm', ['pack', './sdk', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT });
  tarball = path.join(work, packed.stdout.trim().split('\n').at(-1) ?? '');
  project = path.join(work, 'project');
  await cp(path.join(ROOT, 'test/sdk/consumer'), project, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|dist)$/.test(source),
  });
  await writeFile(
    path.join(project, 'src/readme.ts'),
    readmeModule(await readFile(path.join(ROOT, 'sdk/README.md'), 'utf8')),
  );
  // --prefer-offline: the package's one dependency (the webhook verifier's) comes from npm's cache when it can.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project });
  installed = await readdir(path.join(project, 'node_modules'));
  // The two projects compile side by side, each in a tsc process of its own.
  const quickStarted = compileQuickStart();
  try {
    await run(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', project]);
    compiled = { ok: true };
  } catch (error) {
    compiled = { ok: false, output: String(error) };
  }
  quickStart = await quickStarted;
  if (compiled.ok) consumer = await import(pathToFileURL(path.join(project, 'dist/consumer.js')).href);
}

// Neither waits on the other: the server loads while npm and tsc work in their own processes.
beforeAll(() => Promise.all([serve(), packInstallCompile()]));

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed SDK in a partner project', () => {
  it('installs alone (no server dependencies) and compiles with skipLibCheck false, the README examples too; every mistake line is a type error', () => {
    // The webhook verifier's one dependency and its own two; nothing of the server.
    expect(installed.filter((name) => !name.startsWith('.')).sort()).toEqual([
      '@partner-reporting',
      '@stablelib',
      'fast-sha256',
      'standardwebhooks',
    ]);
    expect(compiled).toEqual({ ok: true });
  });

  it("compiles the README's quick start as written, in a new project set up as the README says", () => {
    expect(quickStart).toEqual({ ok: true });
    expect(existsSync(path.join(work, 'fresh/dist/index.js'))).toBe(true);
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

/** A server that accepts connections and never answers: the calls against it can only end by the client. */
async function silentServer() {
  const sockets: Socket[] = [];
  const requests: string[] = [];
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.on('data', (chunk) => {
      const line = chunk.toString('latin1').split('\r\n')[0] ?? '';
      if (/^GET /.test(line)) requests.push(line);
    });
  }).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the packed SDK cancels and times out', () => {
  it('an abort during a request rejects at once with an AbortError, and no retry follows', async () => {
    const silent = await silentServer();
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = performance.now();
      const outcome = await consumer.brandsUntil({ ...options, baseUrl: silent.baseUrl }, controller.signal);
      expect(outcome).toEqual({ name: 'AbortError', code: 'PARTNER_SDK_ABORTED' });
      expect(performance.now() - started).toBeLessThan(5_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(silent.requests).toHaveLength(1);
    } finally {
      await silent.close();
    }
  });

  it('a server that accepts and never answers fails each attempt at timeoutMs, retried like a network failure', async () => {
    const silent = await silentServer();
    try {
      const limited = { ...options, baseUrl: silent.baseUrl, retries: 1, retryDelayMs: 10 };
      expect(await consumer.brandsUntil(limited, undefined, 200)).toEqual({
        name: 'PartnerApiError',
        code: 'PARTNER_SDK_TIMEOUT',
      });
      expect(silent.requests).toHaveLength(2);
    } finally {
      await silent.close();
    }
  });

  it('an abort during a Retry-After wait rejects at once, without calling again', async () => {
    let requests = 0;
    const limiter = createHttpServerPlain((_req, res) => {
      requests++;
      const partner = {
        status: 'PARTNER_API_RATE_LIMITED',
        status_code: 429,
        message: 'The request cannot be processed.',
      };
      res.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': '20',
        'x-request-id': `limited-${requests}`,
      });
      res.end(JSON.stringify({ error: { message: partner.message, code: -32029, data: { partner } } }));
    }).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => limiter.once('listening', resolve));
    try {
      const controller = new AbortController();
      limiter.once('request', () => setTimeout(() => controller.abort(), 200));
      const started = performance.now();
      const baseUrl = `http://127.0.0.1:${(limiter.address() as AddressInfo).port}`;
      expect(await consumer.brandsUntil({ ...options, baseUrl }, controller.signal)).toEqual({
        name: 'AbortError',
        code: 'PARTNER_SDK_ABORTED',
      });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(requests).toBe(1);
    } finally {
      limiter.closeAllConnections();
      await new Promise<void>((resolve) => limiter.close(() => resolve()));
    }
  });
});

describe('the packed SDK tells what an answer said', () => {
  it('withResponse gives the request id it sent (echoed), the rate limit and the next cursor', async () => {
    const first = await consumer.reviewPage(options, BRAND, 5, undefined, 'consumer-export-1');
    expect(first.ids).toHaveLength(5);
    expect(first.requestId).toBe('consumer-export-1');
    expect(first.rateLimit).toMatchObject({ limit: 100000, remaining: expect.any(Number) });
    expect(first.nextCursor).toEqual(expect.any(String));
  });

  it('a walk resumed from a saved cursor reads exactly the reviews after it, and saves its own cursors', async () => {
    const first = await consumer.reviewPage(options, BRAND, 25);
    const resumed = await consumer.reviewsFrom(options, BRAND, 25, first.nextCursor ?? '');
    const all = await consumer.everyReview(options, BRAND, 100);
    expect([...first.ids, ...resumed.ids]).toEqual(all);
    expect(resumed.checkpoints.at(-1)).toBeUndefined();
    expect(resumed.checkpoints.slice(0, -1).every((cursor) => typeof cursor === 'string')).toBe(true);
    const second = await consumer.reviewPage(options, BRAND, 25, resumed.checkpoints[0]);
    expect(second.ids).toEqual(resumed.ids.slice(25, 50));
  });

  it('sales by week answer week rows only, each a Monday', async () => {
    const weeks = await consumer.weekStarts(options, BRAND);
    expect(weeks.length).toBeGreaterThan(0);
    for (const week of weeks) expect(new Date(`${week}T00:00:00Z`).getUTCDay()).toBe(1);
  });
});

describe('the packed SDK as a package', () => {
  it('passes publint and are-the-types-wrong (ESM and CommonJS resolutions)', async () => {
    const publint = await run(path.join(ROOT, 'node_modules/.bin/publint'), [tarball]);
    expect(publint.stdout).toContain('All good');
    const attw = await run(path.join(ROOT, 'node_modules/.bin/attw'), [tarball, '--format', 'json']);
    expect(JSON.parse(attw.stdout).problems ?? {}).toEqual({});
  });

  // Each Node the machine has: the project's (Node 24) and the system's, when it is another.
  const nodes = [process.execPath, '/usr/bin/node'].filter(
    (node, index, all) => existsSync(node) && all.indexOf(node) === index,
  );
  it.each(nodes)('is required from CommonJS and imported from ESM on %s, with the same answers', async (node) => {
    const esm = await consumer.brandCodes(options);
    const args = JSON.stringify({ baseUrl: options.baseUrl, apiKey: options.apiKey });
    const script = (load: string) =>
      `${load}.then((m) => m.brandCodes(${args})).then((codes) => console.log(JSON.stringify(codes)))`;
    const cjs = await run(node, ['-e', script(`Promise.resolve(require('./dist/commonjs.cjs'))`)], { cwd: project });
    const imported = await run(node, ['--input-type=module', '-e', script(`import('./dist/consumer.js')`)], {
      cwd: project,
    });
    expect(JSON.parse(cjs.stdout)).toEqual(esm);
    expect(JSON.parse(imported.stdout)).toEqual(esm);
    const requireError = await run(
      node,
      ['-e', `console.log(require('@partner-reporting/sdk').PartnerApiError.name)`],
      {
        cwd: project,
      },
    );
    expect(requireError.stdout.trim()).toBe('PartnerApiError');
  });
});

describe('the webhook verifier (partner guide § Webhooks)', () => {
  it('accepts a real delivery and rejects a tampered one, from ESM and CommonJS on every Node', async () => {
    const delivery = await realDelivery(database);
    const { body, headers, secret } = delivery;
    expect(consumer.verifiedEvent(secret, body, headers)).toEqual({
      type: 'webhook.test',
      data: { webhook_id: delivery.webhookId },
    });
    const tampered = body.replace('webhook.test', 'webhook.tesT');
    expect(consumer.verifiedEvent(secret, tampered, headers)).toEqual({
      error: 'WebhookVerificationError',
      isVerificationError: true,
    });
    const nodes = [process.execPath, '/usr/bin/node'].filter(
      (node, index, all) => existsSync(node) && all.indexOf(node) === index,
    );
    for (const node of nodes) {
      const call = (text: string) =>
        `console.log(require('./dist/commonjs.cjs').verifiedType(${JSON.stringify(secret)}, ${JSON.stringify(text)}, ${JSON.stringify(headers)}))`;
      expect((await run(node, ['-e', call(body)], { cwd: project })).stdout.trim(), node).toBe('webhook.test');
      expect((await run(node, ['-e', call(tampered)], { cwd: project })).stdout.trim(), node).toBe(
        'WebhookVerificationError',
      );
    }
  });
});

/** A copy of the brand's reviews, by id, after applying the changes in order (UPSERT replaces, DELETE removes). */
function applied(changes: Change[], copy = new Map<string, unknown>()) {
  for (const { review_id, change, review } of changes) {
    if (change === 'DELETE') copy.delete(review_id);
    else copy.set(review_id, review);
  }
  return copy;
}

/** The brand's reviews by id, as the review list answers them now. */
async function reviewList() {
  const list = new Map<string, unknown>();
  for (let page = 1; ; page++) {
    const answer = await api.request(`/partner/v1/brands/${BRAND}/reviews?limit=100&page=${page}`, {
      key: DEMO_KEYS.active,
    });
    const data = (answer.body as unknown as { data: { items: { review_id: string }[]; has_next: boolean } }).data;
    for (const review of data.items) list.set(review.review_id, review);
    if (!data.has_next) return list;
  }
}

// Last in this file: it edits and removes reviews of the brand the tests above read.
describe('the packed SDK keeps a copy with the review change feed', () => {
  it('a first walk hands out every review of the brand as an UPSERT, and its copy equals the review list', async () => {
    const walk = await consumer.reviewChanges(options, BRAND, 7);
    expect(walk.changes.length).toBeGreaterThan(7 * 3);
    expect(walk.changes.every(({ change }) => change === 'UPSERT')).toBe(true);
    expect(applied(walk.changes)).toEqual(await reviewList());
    expect(walk.cursor).toEqual(expect.any(String));
  });

  it('a walk that stopped inside a page resumes from its cursor without skipping a review', async () => {
    const all = await consumer.reviewChanges(options, BRAND, 100);
    const stopped = await consumer.reviewChanges(options, BRAND, 7, undefined, 10);
    expect(stopped.changes).toHaveLength(10);
    // Ten changes in, the first page (7) was handed out whole: the cursor is past it, not past the tenth.
    const resumed = await consumer.reviewChanges(options, BRAND, 7, stopped.cursor);
    expect(resumed.changes.slice(0, 3)).toEqual(stopped.changes.slice(7));
    expect(applied(resumed.changes, applied(stopped.changes))).toEqual(applied(all.changes));
  });

  it('resumed from the saved cursor, it hands out what changed since (an edit, a removal), and then nothing', async () => {
    const walk = await consumer.reviewChanges(options, BRAND, 50);
    const [edited, removed] = [...applied(walk.changes).keys()];
    if (!edited || !removed) throw new Error('the brand needs two reviews');
    await db
      .update(reviewRows)
      .set({ content: 'edited by the change feed test' })
      .where(eq(reviewRows.reviewCode, edited));
    await db.delete(reviewRows).where(eq(reviewRows.reviewCode, removed));
    await transactionsSettled(database);

    const since = await consumer.reviewChanges(options, BRAND, 50, walk.cursor);
    expect(since.changes.map(({ review_id, change }) => [review_id, change])).toEqual(
      expect.arrayContaining([
        [edited, 'UPSERT'],
        [removed, 'DELETE'],
      ]),
    );
    const copy = applied(since.changes, applied(walk.changes));
    expect(copy).toEqual(await reviewList());
    expect(copy.get(edited)).toMatchObject({ content: 'edited by the change feed test' });

    const idle = await consumer.reviewChanges(options, BRAND, 50, since.cursor);
    expect(idle).toEqual({ changes: [], cursor: since.cursor });
  });

  it('with the conditional cache, a repeated read and an idle feed are 304s that resolve as the 200 did', async () => {
    const walk = await consumer.reviewChanges(options, BRAND, 100);
    if (!walk.cursor) throw new Error('a walk gives a cursor');
    const cached = await consumer.cachedReads(options, BRAND, walk.cursor);
    // The list twice, then the feed: a first poll (200) and a second with the same cursor (304).
    expect(cached.statuses).toEqual([200, 304, 200, 304]);
    expect(cached.same).toBe(true);
    // The 304's own RateLimit-* headers (whether its unit came back is the server's rule, tested there).
    expect(cached.remaining).toEqual([expect.any(Number), expect.any(Number)]);
    expect(cached).toMatchObject({ polls: [], cursor: walk.cursor });
  });

  it("a cursor made before the brand's dissatisfaction range changed rejects with CursorExpiredError; a new walk copies the list again", async () => {
    const walk = await consumer.reviewChanges(options, BRAND, 100);
    if (!walk.cursor) throw new Error('a walk gives a cursor');
    await db.update(brandRows).set({ criticalStarMin: 1, criticalStarMax: 3 }).where(eq(brandRows.brandCode, BRAND));
    expect(await consumer.expiredFeed(options, BRAND, walk.cursor)).toEqual({
      name: 'CursorExpiredError',
      code: 'PARTNER_API_CURSOR_EXPIRED',
      status: 410,
      isPartnerApiError: true,
    });
    // Only the ids: the review list takes the new range from the brand list, which reloads within a second.
    const again = await consumer.reviewChanges(options, BRAND, 100);
    expect([...applied(again.changes).keys()].sort()).toEqual([...(await reviewList()).keys()].sort());
  });
});
