import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { findBrand } from '../db/queries/brands';
import { type FeedPosition, loadFeedCursorKey, readReviewChanges } from '../db/queries/review-changes';
import * as schema from '../db/schema';
import { BENCH_BRAND_CODE } from '../db/seed/large';
import { openFeedCursor } from '../routers/reviews/feed-cursor';
import { cpuSeconds, instructionsDuring } from './cpu';
import { inlineParams, markdownTable, type Row, whole } from './lib';
import { paced } from './paced';
import { cleanUpOnExit, pgbenchTps, seededDatabase, startBuiltServer } from './scratch';

// npm run build && npm run bench:feed [-- --reviews N | --reuse DB] [--keep] [--name DB] [--day N]
//   [--recent N] [--rate R] [--duration S] [--rounds N] [--write-seconds S]
// The review change feed (D-26) on the large brand, against the built server (node dist/server/main.js,
// loopback, RATE_LIMIT_PER_MINUTE high so the limiter never refuses):
// 1. the first walk of the brand at limit=100 (calls, time), then a day of --day changes (replies posted,
//    alerts sent, new reviews, a few removed, each write its own statement; replies and alerts go to
//    reviews drawn from the whole brand, or from its newest --recent), then the catch-up from the walk's
//    last cursor (calls, and whether it saw every review written);
// 2. a page of 100 changes against a page of 100 reviews of the list, p99 at --rate req/s evenly spaced
//    (bench/paced.ts), alternated rounds, each rotating over 50 positions, and the CPU time of a call (server
//    and PostgreSQL); targets (D-26): changes' p99 ≤ 2× the list's, their CPU ≤ 1.5× the list's;
// 3. EXPLAIN ANALYZE of the feed's statement (a page of changes, a page of the walk);
// 4. what a write pays for being recorded: pgbench single-row UPDATE and INSERT, and a bulk INSERT, with the
//    feed's triggers enabled and disabled in alternated rounds;
// 5. review_changes' size for 30 days of --day changes.
// Results as JSON in bench/results/feed-*.json. A run leaves a --reuse'd database as it found it for the
// next run: rows it wrote are removed and the change record is emptied at the start.

const { values: args } = parseArgs({
  options: {
    reviews: { type: 'string', default: '1000000' },
    reuse: { type: 'string' },
    keep: { type: 'boolean', default: false },
    name: { type: 'string' },
    day: { type: 'string', default: '5000' },
    recent: { type: 'string' },
    rate: { type: 'string', default: '150' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    'write-seconds': { type: 'string', default: '10' },
  },
});
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const KEY = 'pk_test_demo_active';
const BRAND = `/partner/v1/brands/${BENCH_BRAND_CODE}`;
const LIMIT = 100;
const RATE = Number(args.rate);
const CONNECTIONS = 16;
/** Positions each paced run rotates over, so a call reads 100 changes (or reviews) the last call did not. */
const POSITIONS = 50;
const DAY = Number(args.day);
const ROUNDS = Number(args.rounds);
/** Reviews this bench writes carry this prefix, so a --reuse run removes them first. */
const PREFIX = 'FEED';
const FEED_TRIGGERS = ['review_changes_note_insert', 'review_changes_note_update', 'review_changes_note_delete'];

const { children, cleanups, cleanUp, killGroup } = cleanUpOnExit();

const load = () => os.loadavg()[0]?.toFixed(2) ?? '';
const log = (text: string) => process.stdout.write(`${text}\n`);

type FeedAnswer = { items: { review_id: string; change: string }[]; has_next: boolean; next_cursor: string };

async function getJson(url: string) {
  const response = await fetch(url, { headers: { 'x-partner-api-key': KEY } });
  const body = await response.text();
  if (!response.ok) throw new Error(`${url}: ${response.status} ${body.slice(0, 300)}`);
  return { body: JSON.parse(body).data, link: response.headers.get('link') };
}

/**
 * Follows the feed from `cursor` until has_next is false, at most `maxCalls` calls: the calls made, the
 * cursor each one sent, the items read and the last next_cursor.
 */
async function follow(base: string, cursor: string | undefined, maxCalls: number, onPage?: (page: FeedAnswer) => void) {
  const sent: (string | undefined)[] = [];
  let current = cursor;
  let items = 0;
  const started = performance.now();
  for (;;) {
    if (sent.length >= maxCalls) throw new Error(`no end of the feed after ${maxCalls} calls`);
    const query = `limit=${LIMIT}${current === undefined ? '' : `&cursor=${current}`}`;
    const { body } = await getJson(`${base}${BRAND}/review-changes?${query}`);
    const page = body as FeedAnswer;
    sent.push(current);
    items += page.items.length;
    onPage?.(page);
    current = page.next_cursor;
    if (!page.has_next) break;
  }
  return { calls: sent.length, sent, items, seconds: (performance.now() - started) / 1000, last: current as string };
}

function pgbench(
  databaseUrl: string,
  file: string,
  seconds: number,
  vars: Record<string, number>,
  options = '',
): Promise<number> {
  const defines = Object.entries(vars).flatMap(([name, value]) => ['-D', `${name}=${value}`]);
  return pgbenchTps(databaseUrl, ['-c', '1', '-T', String(seconds), ...defines, '-f', file], children, options);
}

/** Runs `measure` with the feed's triggers on and off in turn (ABBA), `rounds` times each. */
async function onAndOff<T>(sql: postgres.Sql, rounds: number, measure: () => Promise<T>) {
  const runs: { on: T[]; off: T[]; load: string[] } = { on: [], off: [], load: [] };
  for (let round = 0; round < rounds; round++) {
    for (const enabled of round % 2 ? [false, true] : [true, false]) {
      await setFeedTriggers(sql, enabled);
      (enabled ? runs.on : runs.off).push(await measure());
    }
    runs.load.push(load());
  }
  await setFeedTriggers(sql, true);
  return runs;
}

async function setFeedTriggers(sql: postgres.Sql, enabled: boolean) {
  for (const trigger of FEED_TRIGGERS)
    await sql.unsafe(`ALTER TABLE reviews ${enabled ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const instructionsOf = ({ instructions }: { instructions?: { serverM: number; postgresM: number } | undefined }) =>
  instructions ? `${instructions.serverM}+${instructions.postgresM} M instructions` : 'no instruction count';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
};
const percent = (ratio: number) => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)} %`;

async function main() {
  const startedAt = Date.now();
  const { dbName, databaseUrl, database } = await seededDatabase({
    adminUrl: ADMIN_URL,
    name: args.name ?? `partner_feedbench_${process.pid}`,
    reuse: args.reuse,
    keep: args.keep,
    reviews: Number(args.reviews),
    now: new Date(),
    cleanups,
  });
  const sql = postgres(databaseUrl, { max: 4, onnotice: () => {} });
  cleanups.push(() => sql.end());
  const scope = await findBrand(database.db, BENCH_BRAND_CODE);
  if (!scope) throw new Error(`${dbName} has no ${BENCH_BRAND_CODE}: seed it (drop --reuse)`);
  const [partner] = await database.db
    .select({ id: schema.brands.partnerId })
    .from(schema.brands)
    .where(eq(schema.brands.id, scope.id));
  const brandId = scope.id;
  const [shop] = await sql<{ id: number }[]>`SELECT id FROM shops WHERE brand_id = ${brandId} ORDER BY id LIMIT 1`;
  if (!partner || !shop) throw new Error(`${BENCH_BRAND_CODE} has no partner or shop`);

  // As found: the bench's own reviews gone, the feed's triggers on, the record empty. The reviews removed
  // during the day are written now, before the walk.
  await setFeedTriggers(sql, true);
  await sql`DELETE FROM reviews WHERE review_code LIKE ${`${PREFIX}%`}`;
  const removedCount = Math.max(1, Math.round(DAY / 100));
  await sql.unsafe(
    `INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content, rating)
     SELECT '${PREFIX}old' || g, ${brandId}, ${shop.id}, now() - interval '2 days', 'bench review', 4
     FROM generate_series(1, ${removedCount}) g`,
  );
  await sql`TRUNCATE review_changes`;
  await sql`VACUUM ANALYZE reviews`;
  await sql`VACUUM ANALYZE review_changes`;
  const [{ count: brandReviews } = { count: 0 }] = await sql<{ count: number }[]>`
    SELECT count(*)::int AS count FROM reviews WHERE brand_id = ${brandId}`;

  const server = await startBuiltServer(databaseUrl, { children, killGroup });
  cleanups.push(async () => server.stop());

  // 1. The first walk, then a day of changes, then the catch-up from the walk's last cursor.
  log(`first walk of ${whole(brandReviews)} reviews …`);
  const walked = new Set<string>();
  const walkCursors: (string | undefined)[] = [];
  const walk = await follow(server.base, undefined, Math.ceil(brandReviews / LIMIT) + 10, (page) => {
    for (const item of page.items) walked.add(item.review_id);
    walkCursors.push(page.next_cursor);
  });
  const walkLoad = load();
  log(`  ${walk.calls} calls, ${walk.seconds.toFixed(1)} s, ${whole(walked.size)} reviews; load ${walkLoad}`);
  if (walked.size !== brandReviews) throw new Error(`the walk read ${walked.size} reviews of ${brandReviews}`);
  walked.clear();

  log(`a day of ${DAY} changes …`);
  const replies = Math.round(DAY * 0.5);
  const alerts = Math.round(DAY * 0.3);
  const inserted = DAY - replies - alerts - removedCount;
  // Replies and alerts come to recent reviews in practice; the whole brand is the worst case for the feed,
  // whose page then reads reviews scattered over it.
  const drawnFrom = sql`
    SELECT id, review_code FROM reviews
    WHERE brand_id = ${brandId} AND review_code NOT LIKE ${`${PREFIX}%`}
    ${args.recent === undefined ? sql`` : sql`ORDER BY written_at DESC LIMIT ${Number(args.recent)}`}`;
  const targets = await sql<{ id: string; code: string }[]>`
    SELECT id::text, review_code AS code FROM (${drawnFrom}) drawn ORDER BY random() LIMIT ${replies + alerts}`;
  const removed = await sql<{ id: string; code: string }[]>`
    SELECT id::text, review_code AS code FROM reviews WHERE review_code LIKE ${`${PREFIX}old%`}`;
  const writes: (() => Promise<unknown>)[] = [
    ...targets.slice(0, replies).map(
      ({ id }) =>
        () =>
          sql`UPDATE reviews SET reply_state = 'POSTED', reply_content = 'Thank you!', reply_at = now() WHERE id = ${id}`,
    ),
    ...targets.slice(replies).map(
      ({ id }) =>
        () =>
          sql`UPDATE reviews SET alert_sent_at = now() WHERE id = ${id}`,
    ),
    // New reviews come in small batches, as a collector finds them.
    ...Array.from({ length: Math.ceil(inserted / 10) }, (_, batch) => () => {
      const count = Math.min(10, inserted - batch * 10);
      return sql.unsafe(
        `INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content, rating)
         SELECT '${PREFIX}new${batch}_' || g, ${brandId}, ${shop.id}, now(), 'bench review', 4
         FROM generate_series(1, ${count}) g`,
      );
    }),
    ...removed.map(
      ({ id }) =>
        () =>
          sql`DELETE FROM reviews WHERE id = ${id}`,
    ),
  ];
  // Shuffled, four writers at once: transactions of the day interleave and commit out of order.
  for (let i = writes.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [writes[i], writes[j]] = [writes[j] as () => Promise<unknown>, writes[i] as () => Promise<unknown>];
  }
  let nextWrite = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (nextWrite < writes.length) await writes[nextWrite++]?.();
    }),
  );
  const [record] = await sql<{ rows: number; last: string }[]>`
    SELECT count(*)::int AS rows, max(xid)::text AS last FROM review_changes WHERE brand_id = ${brandId}`;
  // A change is read once every transaction older than it ended, on the whole server (D-26): wait for that.
  const waitStarted = Date.now();
  for (;;) {
    const [{ horizon } = { horizon: '0' }] = await sql<{ horizon: string }[]>`
      SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon`;
    if (Number(horizon) > Number(record?.last)) break;
    if (Date.now() - waitStarted > 120_000) throw new Error('the horizon did not pass the day in 120 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const horizonWaitMs = Date.now() - waitStarted;

  // What autovacuum's analyze would do after a day of changes (it is off on this machine), and the daily
  // job does after pruning: without it the planner takes the record for empty.
  await sql`ANALYZE review_changes`;
  log(`catch-up from the walk's last cursor …`);
  const seen = new Map<string, string>();
  const catchUp = await follow(server.base, walk.last, DAY, (page) => {
    for (const item of page.items) seen.set(item.review_id, item.change);
  });
  const catchUpLoad = load();
  const written = new Set([
    ...targets.map(({ code }) => code),
    ...Array.from({ length: inserted }, (_, n) => `${PREFIX}new${Math.floor(n / 10)}_${(n % 10) + 1}`),
  ]);
  const missed = [...written].filter((code) => seen.get(code) !== 'UPSERT').length;
  const missedDeletes = removed.filter(({ code }) => seen.get(code) !== 'DELETE').length;
  log(
    `  ${catchUp.calls} calls, ${catchUp.seconds.toFixed(2)} s, ${catchUp.items} items for ${record?.rows} changes ` +
      `(${missed + missedDeletes} missed); load ${catchUpLoad}`,
  );

  // 2. Page cost: the cursors the catch-up sent, except the last, each read a full page of 100 changes; the
  // list's first 50 pages of 100, reached by its own cursor (D-19).
  const feedUrls = catchUp.sent
    .slice(0, -1)
    .slice(0, POSITIONS)
    .map((cursor) => `${server.base}${BRAND}/review-changes?limit=${LIMIT}&cursor=${cursor}`);
  const listUrls: string[] = [`${server.base}${BRAND}/reviews?limit=${LIMIT}`];
  while (listUrls.length < POSITIONS) {
    const { link } = await getJson(listUrls.at(-1) as string);
    const next = /<([^>]+)>;\s*rel="next"/.exec(link ?? '')?.[1];
    if (!next) throw new Error('the list has no next page');
    listUrls.push(`${server.base}${next}`);
  }
  // Warm, with as many calls at once as the paced runs make, so the server's pool is as large as it gets
  // before the first run and perf counts every backend from its start.
  const warmUp = [...feedUrls, ...listUrls];
  for (let from = 0; from < warmUp.length; from += CONNECTIONS)
    await Promise.all(warmUp.slice(from, from + CONNECTIONS).map((url) => getJson(url)));
  // CPU per call beside the latency, the server's and its database's backends': time, and instructions
  // (perf), which compare across runs on a machine whose speed changes with its other load.
  const runPaced = async (urls: string[]) => {
    const before = cpuSeconds(server.group, dbName);
    const { result, instructions } = await instructionsDuring(server.group, dbName, () =>
      paced((i) => urls[i % urls.length] as string, {
        rate: RATE,
        durationS: Number(args.duration),
        connections: CONNECTIONS,
        headers: { 'x-partner-api-key': KEY },
      }),
    );
    const after = cpuSeconds(server.group, dbName);
    const calls = Math.max(1, result.answered);
    const perCall = (seconds: number) => Math.round((seconds * 1000 * 100) / calls) / 100;
    const millions = (count: number) => Math.round((count / calls / 1e6) * 100) / 100;
    return {
      ...result,
      cpu: { serverMs: perCall(after.server - before.server), postgresMs: perCall(after.postgres - before.postgres) },
      instructions: instructions && {
        serverM: millions(instructions.server),
        postgresM: millions(instructions.postgres),
      },
    };
  };
  type PageRun = Awaited<ReturnType<typeof runPaced>>;
  const pageRuns: { round: number; feed: PageRun; list: PageRun; load: string }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    log(`page cost, round ${round + 1}/${ROUNDS} …`);
    const order = round % 2 ? (['list', 'feed'] as const) : (['feed', 'list'] as const);
    const run: Partial<Record<'feed' | 'list', PageRun>> = {};
    for (const name of order) run[name] = await runPaced(name === 'feed' ? feedUrls : listUrls);
    const { feed, list } = run as Record<'feed' | 'list', PageRun>;
    pageRuns.push({ round, feed, list, load: load() });
    log(
      `  changes p50/p99 ${feed.p50}/${feed.p99} ms, CPU ${feed.cpu.serverMs}+${feed.cpu.postgresMs} ms, ` +
        `${instructionsOf(feed)} a call; list ${list.p50}/${list.p99} ms, CPU ${list.cpu.serverMs}+` +
        `${list.cpu.postgresMs} ms, ${instructionsOf(list)}; load ${load()}`,
    );
  }
  server.stop();

  // 3. The feed's statement, as the server sends it, under EXPLAIN ANALYZE on the same data.
  const statements: { query: string; parameters: unknown[] }[] = [];
  const capturing = postgres(databaseUrl, {
    max: 1,
    onnotice: () => {},
    connection: { TimeZone: 'UTC' },
    debug: (_connection, query, parameters) => {
      statements.push({ query, parameters: [...parameters] });
    },
  });
  cleanups.push(() => capturing.end());
  const cursorScope = { brandCode: BENCH_BRAND_CODE, partnerId: partner.id };
  const cursorKey = await loadFeedCursorKey(drizzle(sql, { schema }));
  const positionOf = (cursor: string | undefined) => {
    const position = openFeedCursor(cursorKey, cursor ?? '', cursorScope);
    if (typeof position !== 'object') throw new Error('a cursor of the run did not open');
    return position;
  };
  const positions: [string, FeedPosition | undefined][] = [
    ['a page of changes', positionOf(catchUp.sent[Math.floor(catchUp.calls / 2)])],
    ['the walk, first page', undefined],
    ['the walk, middle page', positionOf(walkCursors[Math.floor(walk.calls / 2)])],
  ];
  const plans: { name: string; ms: number; plan: string }[] = [];
  for (const [name, position] of positions) {
    statements.length = 0;
    await readReviewChanges(drizzle(capturing, { schema }), scope, position, LIMIT);
    const statement = statements.at(-1);
    if (!statement) throw new Error('no statement captured');
    const text = inlineParams(statement.query, statement.parameters);
    let lines: string[] = [];
    for (let run = 0; run < 2; run++) {
      const rows = await sql.unsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`);
      lines = rows.map((row) => row['QUERY PLAN']);
    }
    const ms = Number(/Execution Time: ([\d.]+)/.exec(lines.join('\n'))?.[1]);
    plans.push({ name, ms, plan: lines.join('\n') });
    log(`EXPLAIN ANALYZE, ${name}: ${ms} ms`);
  }

  // 4. What a write pays for being recorded, on the same database, triggers on and off in turn.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-feed-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const [range] = await sql<{ lo: number; hi: number }[]>`
    SELECT min(id)::int AS lo, max(id)::int AS hi FROM reviews WHERE brand_id = ${brandId}`;
  const updateFile = path.join(dir, 'update.sql');
  await writeFile(
    updateFile,
    `\\set id random(:lo, :hi)\nUPDATE reviews SET reply_state = 'POSTED', reply_content = 'Thank you!', reply_at = clock_timestamp() WHERE id = :id;\n`,
  );
  const insertFile = path.join(dir, 'insert.sql');
  await writeFile(
    insertFile,
    `INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content, rating) VALUES ('${PREFIX}' || replace(gen_random_uuid()::text, '-', ''), :brand, :shop, now(), 'bench review', 4);\n`,
  );
  const vars = { lo: range?.lo ?? 0, hi: range?.hi ?? 0, brand: brandId, shop: shop.id };
  const seconds = Number(args['write-seconds']);
  // Each write as the service commits it (synchronous_commit on: the WAL flush is most of a single-row
  // write), and without the flush, where the trigger's own work shows.
  const NO_FLUSH = '-c synchronous_commit=off';
  log('single-row UPDATE (a reply posted), triggers on/off …');
  const updates = await onAndOff(sql, ROUNDS, () => pgbench(databaseUrl, updateFile, seconds, vars));
  const updatesNoFlush = await onAndOff(sql, ROUNDS, () => pgbench(databaseUrl, updateFile, seconds, vars, NO_FLUSH));
  log('single-row INSERT (a new review), triggers on/off …');
  const inserts = await onAndOff(sql, ROUNDS, () => pgbench(databaseUrl, insertFile, seconds, vars));
  const insertsNoFlush = await onAndOff(sql, ROUNDS, () => pgbench(databaseUrl, insertFile, seconds, vars, NO_FLUSH));
  const BULK = 10_000;
  log(`bulk INSERT of ${whole(BULK)} reviews, triggers on/off …`);
  const bulks = await onAndOff(sql, ROUNDS, async () => {
    const started = performance.now();
    await sql.unsafe(
      `INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content, rating)
       SELECT '${PREFIX}' || replace(gen_random_uuid()::text, '-', ''), ${brandId}, ${shop.id}, now() - g * interval '1 second', 'bench review', 4
       FROM generate_series(1, ${BULK}) g`,
    );
    return performance.now() - started;
  });
  // Time per write, triggers on against off: tps is writes a second, the bulk is ms for all. Medians of the
  // rounds, as for the p99s: one round disturbed by the machine's other load would move a mean.
  const writeCost = {
    update: median(updates.off) / median(updates.on) - 1,
    updateNoFlush: median(updatesNoFlush.off) / median(updatesNoFlush.on) - 1,
    insert: median(inserts.off) / median(inserts.on) - 1,
    insertNoFlush: median(insertsNoFlush.off) / median(insertsNoFlush.on) - 1,
    bulk: median(bulks.on) / median(bulks.off) - 1,
  };
  log(
    `  UPDATE ${percent(writeCost.update)} (no flush ${percent(writeCost.updateNoFlush)}), ` +
      `INSERT ${percent(writeCost.insert)} (no flush ${percent(writeCost.insertNoFlush)}), bulk ${percent(writeCost.bulk)}`,
  );

  // 5. 30 days of the day's changes for the brand: the record's growth, one statement a day.
  const sizeOf = async () =>
    (
      await sql<{ total: string; heap: string }[]>`
        SELECT pg_total_relation_size('review_changes')::text AS total, pg_relation_size('review_changes')::text AS heap`
    )[0] as { total: string; heap: string };
  const before = await sizeOf();
  const DAYS = 30;
  for (let day = 0; day < DAYS; day++) {
    await sql`
      INSERT INTO review_changes (brand_id, review_code, changed_at)
      SELECT ${brandId}, 'B' || lpad((random() * 999999)::int::text, 10, '0'), now() - ${`${DAYS - day} days`}::interval
      FROM generate_series(1, ${DAY})`;
  }
  const after = await sizeOf();
  const sizeRows = DAYS * DAY;
  const size = {
    rows: sizeRows,
    bytes: Number(after.total) - Number(before.total),
    heapBytes: Number(after.heap) - Number(before.heap),
    bytesPerRow: (Number(after.total) - Number(before.total)) / sizeRows,
    load: load(),
  };
  log(`review_changes: +${whole(size.bytes / 2 ** 20)} MiB for ${whole(sizeRows)} rows`);

  // The database as found, for --reuse.
  await sql`DELETE FROM reviews WHERE review_code LIKE ${`${PREFIX}%`}`;
  await sql`TRUNCATE review_changes`;

  const pageP99 = { feed: median(pageRuns.map((r) => r.feed.p99)), list: median(pageRuns.map((r) => r.list.p99)) };
  const cpuOf = (name: 'feed' | 'list') => {
    const server = mean(pageRuns.map((r) => r[name].cpu.serverMs));
    const postgres = mean(pageRuns.map((r) => r[name].cpu.postgresMs));
    const counted = pageRuns.flatMap((r) => r[name].instructions ?? []);
    const instructions = counted.length
      ? `, ${mean(counted.map((i) => i.serverM)).toFixed(2)} + ${mean(counted.map((i) => i.postgresM)).toFixed(2)} M instructions`
      : '';
    return `${server.toFixed(2)} + ${postgres.toFixed(2)} ms${instructions}`;
  };
  const cpuTotal = (name: 'feed' | 'list') =>
    mean(pageRuns.map((r) => r[name].cpu.serverMs)) + mean(pageRuns.map((r) => r[name].cpu.postgresMs));
  const cpuRatio = cpuTotal('feed') / cpuTotal('list');
  const pageErrors = pageRuns.some(
    (r) => r.feed.non2xx || r.feed.errors || r.list.non2xx || r.list.errors || r.feed.answered < r.feed.due,
  );
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const results: Row[] = [
    {
      measure: 'first walk, limit=100',
      figure: `${whole(walk.calls)} calls, ${walk.seconds.toFixed(0)} s (${whole(brandReviews)} reviews)`,
      target: '≈ 10,000+ calls',
      verdict: '',
      'load average': walkLoad,
    },
    {
      measure: `catch-up after ${whole(record?.rows ?? 0)} changes`,
      figure: `${catchUp.calls} calls, ${catchUp.seconds.toFixed(2)} s; ${missed + missedDeletes} missed`,
      target: '≤ 55 calls',
      verdict: verdict(catchUp.calls <= 55 && missed + missedDeletes === 0),
      'load average': catchUpLoad,
    },
    {
      measure: `p99 at ${RATE} req/s, median of ${ROUNDS} alternated rounds`,
      figure:
        `changes ${pageP99.feed} ms, list ${pageP99.list} ms, ${(pageP99.feed / pageP99.list).toFixed(2)}× ` +
        `(rounds: ${pageRuns.map((r) => `${r.feed.p99}/${r.list.p99}`).join(', ')})`,
      target: 'changes ≤ 2× list',
      verdict: verdict(pageP99.feed <= 2 * pageP99.list && !pageErrors),
      'load average': pageRuns.map((r) => r.load).join(', '),
    },
    {
      measure: 'CPU a call, server + PostgreSQL, mean of the rounds',
      figure: `changes ${cpuOf('feed')}, list ${cpuOf('list')}: ${cpuRatio.toFixed(2)}×`,
      target: 'changes ≤ 1.5× list',
      verdict: verdict(cpuRatio <= 1.5),
      'load average': '',
    },
    ...(
      [
        ['single-row UPDATE, tps on/off', updates, writeCost.update],
        ['single-row UPDATE, no WAL flush, tps on/off', updatesNoFlush, writeCost.updateNoFlush],
        ['single-row INSERT, tps on/off', inserts, writeCost.insert],
        ['single-row INSERT, no WAL flush, tps on/off', insertsNoFlush, writeCost.insertNoFlush],
        [`bulk INSERT of ${whole(BULK)}, ms on/off`, bulks, writeCost.bulk],
      ] as const
    ).map(([measure, runs, cost]) => ({
      measure,
      figure: `${whole(median(runs.on))} / ${whole(median(runs.off))}: ${percent(cost)}`,
      target: '≤ +15 %',
      verdict: verdict(cost <= 0.15),
      'load average': runs.load.join(', '),
    })),
    {
      measure: `review_changes, ${DAYS} days × ${whole(DAY)}`,
      figure: `${(size.bytes / 2 ** 20).toFixed(1)} MiB, ${whole(size.bytesPerRow)} bytes a row (heap ${whole(size.heapBytes / sizeRows)})`,
      target: '',
      verdict: '',
      'load average': size.load,
    },
  ];
  const machine = {
    nproc: os.cpus().length,
    node: process.version,
    postgres: (await sql<{ v: string }[]>`SELECT current_setting('server_version') AS v`)[0]?.v,
    reviews: brandReviews,
    database: dbName,
  };
  const table = markdownTable(results);
  log(
    `\n${BENCH_BRAND_CODE}, ${whole(brandReviews)} reviews; ${machine.nproc} cores, PostgreSQL ${machine.postgres}\n\n${table}`,
  );
  const resultsDir = path.resolve(import.meta.dirname, 'results');
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `feed-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(
    file,
    `${JSON.stringify(
      {
        machine,
        walk: { calls: walk.calls, seconds: walk.seconds, load: walkLoad },
        day: {
          changes: record?.rows,
          replies,
          alerts,
          inserted,
          removed: removed.length,
          drawnFromNewest: args.recent === undefined ? null : Number(args.recent),
          horizonWaitMs,
        },
        catchUp: { calls: catchUp.calls, items: catchUp.items, seconds: catchUp.seconds, missed, missedDeletes },
        pageCost: { rate: RATE, durationS: Number(args.duration), positions: POSITIONS, runs: pageRuns, p99: pageP99 },
        plans,
        writes: { seconds, updates, updatesNoFlush, inserts, insertsNoFlush, bulks, cost: writeCost },
        size,
        table,
      },
      null,
      2,
    )}\n`,
  );
  log(`\nsaved ${path.relative(process.cwd(), file)}; ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all`);
  if (!args.reuse && args.keep) log(`kept database ${dbName}: rerun with --reuse ${dbName}`);
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanUp().then(() => process.exit()));
