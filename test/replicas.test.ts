import { appendFileSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDailyAggregate } from '../db/aggregate';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { DEMO_KEYS, seedDemo } from '../db/seed/demo';
import { asPostgres, clustersUnavailable, freePort, postgresUid, stopCluster } from './support/clusters';
import { NOW } from './support/database';
import { eventually } from './support/eventually';
import { built, type LoggedProcess, listeningLine, spawnLogged } from './support/server-process';

// D-23 against a real streaming replica: a scratch primary and a `pg_basebackup -R` standby of it, on free
// ports of this machine, run as the `postgres` OS user, and the server started on both.
const ROOT = path.resolve(import.meta.dirname, '..');
/**
 * The default probe interval. How soon a probe skips a replica, counted in probes, is
 * test/read-replicas.test.ts's, on a clock it moves; here a real standby stops, stalls and falls behind.
 */
const CHECK_MS = 1_000;
const MAX_LAG_MS = 3_000;
/**
 * The server's request deadline: a call caught on a replica that stalls answers 500 by then. A stall is
 * noticed within two probe intervals, well before it, so no further call reaches the stalled replica.
 */
const DEADLINE_MS = 5_000;
const BRAND = 'chicken-house';

const skipped = clustersUnavailable(['initdb', 'pg_ctl', 'pg_basebackup'], ['pg_stat_statements']);

type Cluster = { dir: string; port: number; url: string };

let root = '';
let primary: Cluster;
let replica: Cluster;
let server: LoggedProcess | undefined;
/** The server processes started besides `server`, stopped with it. */
const others: LoggedProcess[] = [];
let base = '';
let seedHandle: DatabaseHandle | undefined;
const admin: { primary?: postgres.Sql; replica?: postgres.Sql } = {};

/** Stops everything this file started and removes the clusters' files; safe to call more than once. */
function cleanUp() {
  for (const started of [server, ...others]) if (started?.child.exitCode === null) started.child.kill('SIGKILL');
  stopCluster(replica);
  stopCluster(primary);
  if (root) rmSync(root, { recursive: true, force: true });
  root = '';
}

async function startCluster(dir: string, port: number): Promise<Cluster> {
  asPostgres('pg_ctl', ['-D', dir, '-l', path.join(dir, 'server.log'), '-w', 'start']);
  return { dir, port, url: `postgres://postgres@127.0.0.1:${port}/partner_replicas` };
}

const settings = (port: number) =>
  [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${root}'`,
    'wal_level = replica',
    'max_wal_senders = 4',
    'hot_standby = on',
    'fsync = off',
    'shared_buffers = 32MB',
    // Nothing but the test reads the tables.
    'autovacuum = off',
    "shared_preload_libraries = 'pg_stat_statements'",
    '',
  ].join('\n');

/**
 * The statements on the reviews table a server has run so far (the directories never read it), counted by
 * pg_stat_statements as each ends: table statistics would show only once a session has idled for seconds.
 */
async function reviewStatements(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ calls: string }[]>`
    SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_statements WHERE query LIKE '%"reviews"%'`;
  return Number(row?.calls ?? 0);
}

/** The server's sessions on a server whose last statement's text is like `pattern` (seen at once). */
async function lastStatements(sql: postgres.Sql, pattern: string): Promise<number> {
  const [row] = await sql<{ sessions: string }[]>`
    SELECT count(*) AS sessions FROM pg_stat_activity
    WHERE datname = 'partner_replicas' AND pid <> pg_backend_pid() AND query LIKE ${pattern}`;
  return Number(row?.sessions ?? 0);
}

const get = (route: string, at = base) =>
  fetch(`${at}${route}`, { headers: { 'x-partner-api-key': DEMO_KEYS.active } }).then(async (response) => ({
    status: response.status,
    body: (await response.json()) as { data?: { items?: { review_id?: string }[] } },
  }));

/** A server process on the clusters: the primary, and the replica within MAX_LAG_MS unless `env` says otherwise. */
function startServer(env: Record<string, string | undefined> = {}): LoggedProcess {
  return spawnLogged(process.execPath, [built('server/main.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000',
      DATABASE_URL: primary.url,
      DATABASE_REPLICA_URLS: replica.url,
      DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      DATABASE_REPLICA_CHECK_MS: String(CHECK_MS),
      REQUEST_DEADLINE_MS: String(DEADLINE_MS),
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/**
 * Calls of every route, three at a time, while `fault` befalls the replica: until it is skipped and half a
 * second more (calls then on the primary). What failed, how many calls, why it was skipped, and what
 * /readyz and the replica gauge said meanwhile.
 */
async function underLoad(fault: () => void) {
  // Without routes every call fails before any I/O, and the workers would never let a timer run.
  if (routes.length === 0) throw new Error('no routes: the first test did not get them');
  const failures: string[] = [];
  let calls = 0;
  let running = true;
  const worker = async () => {
    for (let i = 0; running; i++) {
      const route = routes[i % routes.length] as string;
      const answer = await get(route).catch((error: unknown) => ({ status: 0, body: { error: String(error) } }));
      calls += 1;
      if (answer.status !== 200) failures.push(`${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
  };
  const workers = [worker(), worker(), worker()];
  const left = logged('replica skipped').length;
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    fault();
    await eventually(
      () => logged('replica skipped').length,
      (skips) => skips > left,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const ready = (await fetch(`${base}/readyz`)).status;
    const inRotation = await metric('partner_api_db_replicas_in_rotation');
    return { failures, calls, left: logged('replica skipped')[left], ready, inRotation };
  } finally {
    running = false;
    await Promise.all(workers);
  }
}

/** The PIDs of a process's children (Linux). */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/**
 * Resolves once the server has the replica in rotation. A probe that a busy machine leaves unanswered for
 * an interval skips a healthy replica until the next one (D-23): a test that needs it waits for it here.
 */
const inRotation = () =>
  eventually(
    () => metric('partner_api_db_replicas_in_rotation'),
    (lines) => lines[0] === 'partner_api_db_replicas_in_rotation 1',
  );

/** The skips after the first `from` for the replica being behind: what a rebuild or a walk must not cause. */
const behindSkips = (from = 0) =>
  logged('replica skipped')
    .slice(from)
    .filter((line) => line.reason === 'behind');

/** The server's metric lines that start with `name`. */
async function metric(name: string): Promise<string[]> {
  const { port } = (logged('listening')[0]?.metrics ?? {}) as { port?: number };
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith(name));
}

type Review = { review_id: string } & Record<string, unknown>;
type FeedData = {
  items: { review_id: string; change: 'UPSERT' | 'DELETE'; review: Review | null }[];
  has_next: boolean;
  next_cursor: string;
};

/** One page of the brand's review change feed (D-26) from the server at `at`, after `cursor`. */
async function feedPage(at: string, cursor?: string): Promise<FeedData> {
  const query = cursor === undefined ? '' : `&cursor=${cursor}`;
  const answer = await get(`/partner/v1/brands/${BRAND}/review-changes?limit=100${query}`, at);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.data as unknown as FeedData;
}

/** A partner's copy: UPSERT replaces, DELETE removes. */
function apply(copy: Map<string, Review>, data: FeedData) {
  for (const item of data.items) {
    if (item.change === 'UPSERT' && item.review) copy.set(item.review_id, item.review);
    else copy.delete(item.review_id);
  }
}

/** Pages of the feed until caught up, each applied; `between` runs after each page. The last cursor. */
async function follow(
  at: string,
  copy: Map<string, Review>,
  cursor?: string,
  between?: (page: number) => Promise<void>,
) {
  let position = cursor;
  for (let page = 0; page < 200; page++) {
    const data = await feedPage(at, position);
    apply(copy, data);
    position = data.next_cursor;
    if (!data.has_next) return position;
    await between?.(page);
  }
  throw new Error('the feed did not catch up in 200 pages');
}

/** The brand's review list, whole, by review_id, from the server at `at`: what a copy must equal. */
async function listed(at: string): Promise<Map<string, Review>> {
  const all = new Map<string, Review>();
  for (let page = 1; ; page++) {
    const answer = await get(`/partner/v1/brands/${BRAND}/reviews?limit=100&page=${page}`, at);
    expect(answer.status).toBe(200);
    const data = answer.body.data as unknown as { items: Review[]; has_next: boolean };
    for (const item of data.items) all.set(item.review_id, item);
    if (!data.has_next) return all;
  }
}

/** A new review of the brand on the primary, at its first shop. */
async function insertReview(sql: postgres.Sql, code: string, writtenAt: Date) {
  await sql`
    INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content, rating)
    SELECT ${code}, brands.id, shops.id, ${writtenAt}, ${code}, 2
    FROM brands JOIN shops ON shops.brand_id = brands.id WHERE brands.brand_code = ${BRAND}
    ORDER BY shops.id LIMIT 1`;
}

/** Resolves once the replica has replayed everything the primary has written so far. */
async function replicaReplayed(sql: { primary: postgres.Sql; replica: postgres.Sql }) {
  const [{ position } = { position: '0/0' }] = await sql.primary<{ position: string }[]>`
    SELECT pg_current_wal_lsn()::text AS position`;
  await eventually(
    async () =>
      (
        await sql.replica<{ replayed: boolean }[]>`
      SELECT pg_last_wal_replay_lsn() >= ${position}::pg_lsn AS replayed`
      )[0]?.replayed,
    (replayed) => replayed === true,
  );
}

/** Runs `work` while the standby replays nothing, then waits for it to catch up. */
async function whileReplayPaused(sql: { primary: postgres.Sql; replica: postgres.Sql }, work: () => Promise<void>) {
  await sql.replica`SELECT pg_wal_replay_pause()`;
  try {
    await eventually(
      async () => (await sql.replica`SELECT pg_get_wal_replay_pause_state() AS state`)[0]?.state,
      (state) => state === 'paused',
    );
    await work();
  } finally {
    await sql.replica`SELECT pg_wal_replay_resume()`;
  }
  await replicaReplayed(sql);
}

/** Whether a review is on a server. */
async function hasReview(sql: postgres.Sql, code: string): Promise<boolean> {
  const [row] = await sql<
    { found: boolean }[]
  >`SELECT exists (SELECT FROM reviews WHERE review_code = ${code}) AS found`;
  return row?.found === true;
}

/**
 * Two more servers, started once: one reading on the primary only, one keeping the replica in rotation
 * through a long pause of its replay (its lag bound far above any test's length, its probes patient).
 */
let feedServers: Promise<{ onPrimary: string; patient: LoggedProcess & { base: string } }> | undefined;
function startFeedServers() {
  feedServers ??= (async () => {
    const onPrimary = startServer({ DATABASE_REPLICA_URLS: undefined });
    const patient = startServer({
      DATABASE_REPLICA_MAX_LAG_MS: String(10 * 60_000),
      DATABASE_REPLICA_CHECK_MS: String(10 * CHECK_MS),
    });
    others.push(onPrimary, patient);
    const [primaryLine, patientLine] = await Promise.all([listeningLine(onPrimary), listeningLine(patient)]);
    await eventually(() => patient.lines.some((line) => line.msg === 'replica usable'), Boolean);
    return { onPrimary: primaryLine.base, patient: { ...patient, base: patientLine.base } };
  })();
  return feedServers;
}

/** Every kind of read the API makes (the review's id is the newest review's), once the server is up. */
let routes: string[] = [];

const logged = (msg: string) => server?.lines.filter((line) => line.msg === msg) ?? [];

process.once('exit', cleanUp);

describe.skipIf(skipped)(`read replicas (D-23)${skipped ? ` — skipped: ${skipped}` : ''}`, () => {
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'partner-replicas-'));
    chownSync(root, postgresUid(), -1);
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    const primaryDir = path.join(root, 'primary');
    asPostgres('initdb', ['-D', primaryDir, '--auth=trust', '--no-sync', '-U', 'postgres']);
    appendFileSync(path.join(primaryDir, 'postgresql.conf'), settings(primaryPort));
    primary = await startCluster(primaryDir, primaryPort);
    admin.primary = postgres(primary.url.replace('/partner_replicas', '/postgres'), { max: 1, onnotice: () => {} });
    await admin.primary.unsafe('CREATE DATABASE partner_replicas');
    await admin.primary.end();
    const inDatabase = postgres(primary.url, { max: 1, onnotice: () => {} });
    await inDatabase.unsafe('CREATE EXTENSION pg_stat_statements');
    await inDatabase.end();
    // The demo data as every test file sees it (the run's clock), on the primary.
    seedHandle = await openDatabase({ url: primary.url, maxConnections: 2 });
    await seedHandle.migrate();
    await seedDemo(seedHandle.db, { now: NOW });
    await buildDailyAggregate(seedHandle.db, { now: NOW });
    await seedHandle.close();
    seedHandle = undefined;

    const replicaDir = path.join(root, 'replica');
    asPostgres('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir],
      ...['-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'],
    ]);
    appendFileSync(path.join(replicaDir, 'postgresql.conf'), `port = ${replicaPort}\n`);
    replica = await startCluster(replicaDir, replicaPort);
    admin.primary = postgres(primary.url, { max: 1, onnotice: () => {} });
    admin.replica = postgres(replica.url, { max: 1, onnotice: () => {} });
    await eventually(
      async () => (await admin.primary?.unsafe('SELECT state FROM pg_stat_replication'))?.[0]?.state,
      (state) => state === 'streaming',
    );

    server = startServer();
    base = (await listeningLine(server)).base;
  });

  afterAll(async () => {
    await Promise.all([admin.primary?.end({ timeout: 1 }), admin.replica?.end({ timeout: 1 }), seedHandle?.close()]);
    cleanUp();
  });

  const answers = new Map<string, unknown>();

  it('starts with the replica usable, and reads land on it, not on the primary', async () => {
    expect(server?.lines.find((line) => line.msg === 'listening')?.replicas).toEqual({ configured: 1, usable: 1 });
    expect(await metric('partner_api_db_replicas_in_rotation')).toEqual(['partner_api_db_replicas_in_rotation 1']);
    const sql = { primary: admin.primary as postgres.Sql, replica: admin.replica as postgres.Sql };
    const before = {
      primary: await reviewStatements(sql.primary),
      replica: await reviewStatements(sql.replica),
    };
    const list = await get(`/partner/v1/brands/${BRAND}/reviews?limit=20`);
    expect(list.status).toBe(200);
    const reviewId = list.body.data?.items?.[0]?.review_id;
    routes = [
      `/partner/v1/brands/${BRAND}/reviews?limit=20`,
      `/partner/v1/brands/${BRAND}/reviews?critical=true&limit=20`,
      `/partner/v1/brands/${BRAND}/reviews/${reviewId}`,
      `/partner/v1/brands/${BRAND}/users`,
      `/partner/v1/brands/${BRAND}/shops`,
      `/partner/v1/brands/${BRAND}/review-stats?group_by=date`,
      `/partner/v1/brands/${BRAND}/sales?group_by=shop`,
    ];
    for (const route of routes) {
      const answer = await get(route);
      expect(answer.status, route).toBe(200);
      answers.set(route, answer.body);
    }
    expect(await reviewStatements(sql.replica)).toBeGreaterThan(before.replica);
    expect(await reviewStatements(sql.primary)).toBe(before.primary);
  });

  it('does not find the replica behind through a rebuild of the daily aggregate on the primary', async () => {
    seedHandle = await openDatabase({ url: primary.url, maxConnections: 2 });
    await buildDailyAggregate(seedHandle.db, { now: NOW });
    // Two probes after the burst.
    await new Promise((resolve) => setTimeout(resolve, 2 * CHECK_MS));
    expect(behindSkips()).toEqual([]);
  });

  it('loses no call when the replica stops, skips it, and stays ready', async () => {
    await inRotation();
    const outcome = await underLoad(() => asPostgres('pg_ctl', ['-D', replica.dir, '-m', 'immediate', 'stop']));
    expect(outcome.failures).toEqual([]);
    expect(outcome.calls).toBeGreaterThan(routes.length);
    expect(outcome.left).toMatchObject({ replica: 0 });
    expect(outcome.ready).toBe(200);
    expect(outcome.inRotation).toEqual(['partner_api_db_replicas_in_rotation 0']);
  });

  it('answers from the primary what it answered from the replica', async () => {
    for (const route of routes) {
      const answer = await get(route);
      expect(answer.status, route).toBe(200);
      expect(answer.body, route).toEqual(answers.get(route));
    }
  });

  it('takes the replica back by itself once it answers again', async () => {
    await startCluster(replica.dir, replica.port);
    await inRotation();
    expect(await lastStatements(admin.replica as postgres.Sql, '%"reviews"%')).toBe(0);
    expect((await get(routes[0] as string)).status).toBe(200);
    expect(await lastStatements(admin.replica as postgres.Sql, '%"reviews"%')).toBeGreaterThan(0);
  });

  it('when the replica stalls (answers nothing), only the calls already on it fail, by their deadline', async () => {
    const postmaster = Number(readFileSync(path.join(replica.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const processes = [postmaster, ...childrenOf(postmaster)];
    await inRotation();
    try {
      const outcome = await underLoad(() => {
        for (const pid of processes) process.kill(pid, 'SIGSTOP');
      });
      // At most one call of each of the three workers was on it; the probe skips it for the others.
      expect(outcome.failures.length).toBeLessThanOrEqual(3);
      for (const failure of outcome.failures) expect(failure).toMatch(/: 500 /);
      expect(outcome.left).toMatchObject({ replica: 0, reason: 'unreachable' });
      expect(outcome.ready).toBe(200);
    } finally {
      for (const pid of processes) process.kill(pid, 'SIGCONT');
    }
    await inRotation();
  });

  it("reads on the replica follow a change of a brand's critical range within the brand list's bound (1 s)", async () => {
    const sql = { primary: admin.primary as postgres.Sql, replica: admin.replica as postgres.Sql };
    await inRotation();
    const left = logged('replica skipped').length;
    await sql.replica`SELECT pg_wal_replay_pause()`;
    // Every rated review of the brand is critical now (D-7), on the primary only: the replica has paused.
    await sql.primary`UPDATE brands SET critical_star_min = 1, critical_star_max = 5 WHERE brand_code = ${BRAND}`;
    const criticalRated = async () => {
      const list = await get(`/partner/v1/brands/${BRAND}/reviews?limit=50`);
      const items = (list.body.data?.items ?? []) as { rating: number | null; is_critical: boolean }[];
      const rated = items.filter((item) => item.rating !== null && item.rating >= 0.5);
      return rated.length > 0 && rated.every((item) => item.is_critical);
    };
    await expect.poll(criticalRated, { timeout: 2_000, interval: 100 }).toBe(true);
    // Read on the replica, which still holds the old range: the statement carried the brand list's.
    expect(behindSkips(left)).toEqual([]);
    expect(await lastStatements(sql.replica, '%::smallint%')).toBeGreaterThan(0);
    // Replaying nothing, it falls behind the lag bound and is skipped for it.
    const [skip] = await eventually(
      () => behindSkips(left),
      (skips) => skips.length > 0,
    );
    expect(skip).toMatchObject({ replica: 0 });
    await sql.replica`SELECT pg_wal_replay_resume()`;
    await inRotation();
  });

  it('a walk of the review change feed on the replica builds a copy equal to the review list, with writes on the primary between its pages', async () => {
    const sql = { primary: admin.primary as postgres.Sql, replica: admin.replica as postgres.Sql };
    const first = await get(`/partner/v1/brands/${BRAND}/reviews?limit=10`);
    const [replied, removed, removedLater] = (first.body.data?.items ?? []).map((item) => item.review_id as string);
    const newest = new Date(NOW.getTime() - 3_600_000);
    const oldest = new Date('2020-01-01T00:00:00Z');
    const writes = [
      // Before the walk's position in the list's order (already passed), and after it.
      () => insertReview(sql.primary, 'R-feed-replica-new', newest),
      () => insertReview(sql.primary, 'R-feed-replica-old', oldest),
      () => sql.primary`
        UPDATE reviews SET reply_state = 'POSTED', reply_content = '감사합니다', reply_at = ${newest}
        WHERE review_code = ${replied ?? ''}`,
      () => sql.primary`DELETE FROM reviews WHERE review_code = ${removed ?? ''}`,
    ];
    const later = [
      () => insertReview(sql.primary, 'R-feed-replica-later', newest),
      () => sql.primary`DELETE FROM reviews WHERE review_code IN (${removedLater ?? ''}, 'R-feed-replica-old')`,
    ];
    await inRotation();
    const before = logged('replica skipped').length;
    const copy = new Map<string, Review>();
    // The first read, with every kind of write between its pages (it has far more pages than writes).
    let written = 0;
    let cursor = await follow(base, copy, undefined, async () => {
      await writes[written++]?.();
    });
    expect(written).toBeGreaterThan(writes.length);
    // The changes after it, with writes between their calls.
    for (const write of later) {
      await write();
      cursor = await follow(base, copy, cursor);
    }
    await replicaReplayed(sql);
    cursor = await follow(base, copy, cursor);
    // The last page was read on the replica.
    expect(await lastStatements(sql.replica, '%review_changes%')).toBeGreaterThan(0);
    const list = await listed(base);
    // The list has every write.
    for (const code of ['R-feed-replica-new', 'R-feed-replica-later']) expect(list.has(code), code).toBe(true);
    for (const code of [removed, removedLater, 'R-feed-replica-old']) expect(list.has(code ?? ''), code).toBe(false);
    expect(copy).toEqual(list);
    // Read on the replica, which the writes never put behind.
    expect(behindSkips(before)).toEqual([]);
  });

  it('reruns on the primary a feed call whose cursor the replica has not reached, the replica still in rotation', async () => {
    const sql = { primary: admin.primary as postgres.Sql, replica: admin.replica as postgres.Sql };
    const { onPrimary, patient } = await startFeedServers();
    await whileReplayPaused(sql, async () => {
      await insertReview(sql.primary, 'R-feed-walked', NOW);
      // A walk on the primary: its copy has the review the replica has not replayed.
      const copy = new Map<string, Review>();
      const cursor = await follow(onPrimary, copy);
      expect(copy.has('R-feed-walked')).toBe(true);
      await insertReview(sql.primary, 'R-feed-after-walk', NOW);
      expect(await hasReview(sql.replica, 'R-feed-after-walk')).toBe(false);
      // Only the primary has the change after the cursor; the replica would answer none.
      const next = await feedPage(patient.base, cursor);
      expect(next.items.map((item) => item.review_id)).toEqual(['R-feed-after-walk']);
      expect(patient.lines.filter((line) => line.msg === 'replica skipped')).toEqual([]);
    });
  });

  // The replica's horizon equals the xid of the change the cursor has read, which it has not replayed: it
  // holds that transaction in flight, so it is behind the cursor.
  it('reruns on the primary a feed call whose cursor has read a change the replica has not replayed', async () => {
    const sql = { primary: admin.primary as postgres.Sql, replica: admin.replica as postgres.Sql };
    const { onPrimary, patient } = await startFeedServers();
    const caughtUp = await follow(onPrimary, new Map());
    await whileReplayPaused(sql, async () => {
      await insertReview(sql.primary, 'R-feed-seen', NOW);
      const seen = await feedPage(onPrimary, caughtUp);
      expect(seen.items.map((item) => item.review_id)).toEqual(['R-feed-seen']);
      await insertReview(sql.primary, 'R-feed-after-seen', NOW);
      expect(await hasReview(sql.replica, 'R-feed-after-seen')).toBe(false);
      const next = await feedPage(patient.base, seen.next_cursor);
      expect(next.items.map((item) => item.review_id)).toEqual(['R-feed-after-seen']);
      expect(patient.lines.filter((line) => line.msg === 'replica skipped')).toEqual([]);
    });
  });

  it('reruns on the primary a cursor of a history the replica has not replayed (after expire-cursors)', async () => {
    const sql = { primary: admin.primary as postgres.Sql, replica: admin.replica as postgres.Sql };
    const { onPrimary, patient } = await startFeedServers();
    await whileReplayPaused(sql, async () => {
      await sql.primary`UPDATE review_feed_history SET history = gen_random_uuid()`;
      const caughtUp = await follow(onPrimary, new Map());
      await insertReview(sql.primary, 'R-feed-new-history', NOW);
      const next = await feedPage(patient.base, caughtUp);
      expect(next.items.map((item) => item.review_id)).toEqual(['R-feed-new-history']);
      expect(patient.lines.filter((line) => line.msg === 'replica skipped')).toEqual([]);
    });
  });
});
