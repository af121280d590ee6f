import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { findBrand } from '../db/queries/brands';
import { BENCH_BRAND_CODE } from '../db/seed/large';
import { addEndpoint } from '../server/webhooks/admin';
import { checkTarget } from '../server/webhooks/target';
import { cpuSeconds } from './cpu';
import { markdownTable } from './lib';
import { type PacedResult, paced, quantile } from './paced';
import { cleanUpOnExit, freePort, seededDatabase, startBuiltServer } from './scratch';

// npm run build && npm run bench:webhooks [-- --reviews N | --reuse DB] [--keep] [--rate R] [--writes N]
//   [--bulk N] [--rounds N] [--control]
// Webhook delivery (D-28) from the built server (node dist/server/main.js, loopback) to a receiver process
// (bench/webhook-receiver.ts) that verifies every signature and answers in 5 ms:
// 1. commit to delivery: --writes single-review updates, one every 50 ms, while the API serves a paced load
//    of --rate req/s (the review list); each latency is from the UPDATE's return to the event's arrival;
// 2. a bulk change of --bulk reviews in one statement: time until every one arrived (target: 5,000 in 60 s);
// 3. what an API call costs meanwhile: the same paced load idle, then from the bulk's commit while it is
//    delivered (target: p50 and p99 within 10 % of idle), with the server's event-loop delay over each
//    window (the longest a call waited for the loop), and the CPU each window took: the server, the
//    database's PostgreSQL backends and the receiver; beyond idle, over the events delivered in the window,
//    what a delivery costs each.
// 2 and 3 run --rounds times. A window's p99 is its few slowest calls, so a single stall of the machine
// moves it; the calls of every round's windows are also pooled, idle against during. With --control the
// endpoint is disabled before the rounds: the same writes and windows without a delivery, the figures'
// spread between two windows that differ in nothing.
// Results as JSON in the results folder beside this file (webhooks-<time>.json).

const { values: args } = parseArgs({
  options: {
    reviews: { type: 'string', default: '20000' },
    reuse: { type: 'string' },
    keep: { type: 'boolean', default: false },
    rate: { type: 'string', default: '150' },
    writes: { type: 'string', default: '200' },
    bulk: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    control: { type: 'boolean', default: false },
  },
});
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const KEY = 'pk_test_demo_active';
const RATE = Number(args.rate);
const SECRETS_KEY = randomBytes(32);

const { children, cleanups, cleanUp, killGroup } = cleanUpOnExit();
const log = (text: string) => process.stdout.write(`${text}\n`);

/**
 * A partner's receiver (bench/webhook-receiver.ts) in a process of its own, as a partner's server is: its
 * verifying and answering take no turn of this process's event loop, which times the API's calls.
 */
async function receiver() {
  const child = fork(path.join(import.meta.dirname, 'webhook-receiver.ts'), [], {
    execArgv: ['--import', 'tsx'],
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  const arrivals = new Map<string, number>();
  let unverified = 0;
  const waiters: (() => void)[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
    child.on('message', (message: { port?: number; arrivals?: [string, number][]; unverified?: number }) => {
      if (message.port) resolve(message.port);
      // Arrival times are epoch milliseconds, on this process's scale below.
      for (const [id, at] of message.arrivals ?? []) arrivals.set(id, at - performance.timeOrigin);
      unverified = message.unverified ?? unverified;
      if (message.arrivals) for (const wake of waiters.splice(0)) wake();
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    group: child.pid as number,
    verifyWith(secret: string) {
      child.send({ secret });
    },
    arrivals,
    unverified: () => unverified,
    /** Resolves once every one of `ids` has arrived. */
    async all(ids: string[]) {
      while (!ids.every((id) => arrivals.has(id))) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

type LoopDelay = { p99: number; max: number };
/** CPU seconds a window took: the server, the database's PostgreSQL backends, the receiver. */
type WindowCpu = { server: number; postgres: number; receiver: number };

const ms = (value: number) => Math.round(value * 10) / 10;

async function main() {
  const { databaseUrl, database } = await seededDatabase({
    adminUrl: ADMIN_URL,
    name: `partner_hookbench_${process.pid}`,
    reuse: args.reuse,
    keep: args.keep,
    reviews: Number(args.reviews),
    now: new Date(),
    cleanups,
  });
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  cleanups.push(() => sql.end());
  const scope = await findBrand(database.db, BENCH_BRAND_CODE);
  if (!scope) throw new Error(`no ${BENCH_BRAND_CODE}: seed it (drop --reuse)`);
  const [owner] = await sql<{ name: string }[]>`
    SELECT p.name FROM partners p JOIN brands b ON b.partner_id = p.id WHERE b.id = ${scope.id}`;
  await sql`UPDATE webhook_endpoints SET status = 'DISABLED'`;

  const metricsPort = await freePort();
  const server = await startBuiltServer(
    databaseUrl,
    { children, killGroup },
    {
      WEBHOOK_SECRETS_KEY: SECRETS_KEY.toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      METRICS_PORT: String(metricsPort),
    },
  );

  /** The server's event-loop delay since the last read, in ms (prom-client starts it afresh at each scrape). */
  const loopDelay = async (): Promise<LoopDelay> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const gauge = (name: string) =>
      ms(1000 * Number(text.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1] ?? Number.NaN));
    return { p99: gauge('nodejs_eventloop_lag_p99_seconds'), max: gauge('nodejs_eventloop_lag_max_seconds') };
  };
  const receiving = await receiver();
  const databaseName = new URL(databaseUrl).pathname.slice(1);
  const cpuNow = (): WindowCpu => ({
    ...cpuSeconds(server.group, databaseName),
    receiver: cpuSeconds(receiving.group).server,
  });
  const cpuSince = (start: WindowCpu): WindowCpu => {
    const end = cpuNow();
    return {
      server: ms(end.server - start.server),
      postgres: ms(end.postgres - start.postgres),
      receiver: ms(end.receiver - start.receiver),
    };
  };
  const checked = await checkTarget(receiving.url, true);
  if (!('target' in checked)) throw new Error(checked.refused);
  const added = await addEndpoint(database.db, SECRETS_KEY, {
    partner: owner?.name ?? '',
    target: checked.target,
    brandCodes: [BENCH_BRAND_CODE],
    criticalOnly: false,
  });
  receiving.verifyWith(added.secret);
  const load = (durationS: number, latencies: number[] = []) =>
    paced(`${server.base}/partner/v1/brands/chicken-house/reviews?limit=20`, {
      rate: RATE,
      durationS,
      connections: 16,
      headers: { 'x-partner-api-key': KEY },
      onAnswer: (call) => latencies.push(call.ms),
    });

  // 1. Commit to delivery under the API's load.
  const writes = Number(args.writes);
  const codes = (
    await sql<{ code: string }[]>`SELECT review_code AS code FROM reviews WHERE brand_id = ${scope.id}
      ORDER BY written_at DESC LIMIT ${writes}`
  ).map((row) => row.code);
  const committed = new Map<string, number>();
  const loaded = load((writes * 50) / 1000 + 2);
  for (const code of codes) {
    await sql`UPDATE reviews SET content = content || '.' WHERE review_code = ${code}`;
    committed.set(code, performance.now());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await receiving.all(codes);
  const underLoad = await loaded;
  const latencies = codes
    .map((code) => (receiving.arrivals.get(code) ?? 0) - (committed.get(code) ?? 0))
    .sort((a, b) => a - b);
  const latency = {
    p50: ms(quantile(latencies, 0.5)),
    p99: ms(quantile(latencies, 0.99)),
    max: ms(latencies.at(-1) ?? 0),
  };
  log(
    `commit to delivery, ${writes} writes at ${RATE} req/s: ${JSON.stringify(latency)}; API ${JSON.stringify(underLoad)}`,
  );

  const bulk = Number(args.bulk);
  if (args.control) await sql`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE id = ${added.id}`;
  const bulkCodes = (
    await sql<{ code: string }[]>`SELECT review_code AS code FROM reviews WHERE brand_id = ${scope.id}
      ORDER BY written_at ASC LIMIT ${bulk}`
  ).map((row) => row.code);
  const rounds: {
    /** Null under --control, where nothing is delivered. */
    bulkSeconds: number | null;
    idle: PacedResult;
    during: PacedResult;
    loopDelay: { idle: LoopDelay; during: LoopDelay };
    cpu: { idle: WindowCpu; during: WindowCpu };
    /** Events that arrived within the window during delivery. */
    deliveredInWindow: number;
  }[] = [];
  const pooled = { idle: [] as number[], during: [] as number[] };
  for (let round = 1; round <= Number(args.rounds); round++) {
    // 3 (idle part). The API alone.
    await loopDelay();
    const idleStart = cpuNow();
    const idle = await load(30, pooled.idle);
    const idleCpu = cpuSince(idleStart);
    const idleLoop = await loopDelay();

    // 2. A bulk change, and 3. the API from its commit while it is delivered: the write itself is the
    // writer's cost, which the calls pay with or without webhooks.
    for (const code of bulkCodes) receiving.arrivals.delete(code);
    const started = performance.now();
    await sql`UPDATE reviews SET content = content || '!' WHERE review_code = ANY(${bulkCodes})`;
    const duringStart = cpuNow();
    const windowStarted = performance.now();
    const during = await load(30, pooled.during);
    const windowEnded = performance.now();
    const duringCpu = cpuSince(duringStart);
    if (!args.control) await receiving.all(bulkCodes);
    if (!args.control && performance.now() - windowEnded < 1_000)
      log('  the bulk was delivered before the window ended: lower --rate or raise --bulk');
    const bulkSeconds = args.control ? null : Math.round((performance.now() - started) / 100) / 10;
    const duringLoop = await loopDelay();
    const deliveredInWindow = bulkCodes.filter((code) => {
      const at = receiving.arrivals.get(code);
      return at !== undefined && at >= windowStarted && at < windowEnded;
    }).length;
    rounds.push({
      bulkSeconds,
      idle,
      during,
      loopDelay: { idle: idleLoop, during: duringLoop },
      cpu: { idle: idleCpu, during: duringCpu },
      deliveredInWindow,
    });
    log(
      `round ${round}: bulk of ${bulkCodes.length} ${args.control ? 'written, not delivered' : `all delivered in ${bulkSeconds} s`}`,
    );
    log(`  API idle ${JSON.stringify(idle)}; during deliveries ${JSON.stringify(during)}`);
    log(`  server event-loop delay idle ${JSON.stringify(idleLoop)}; during ${JSON.stringify(duringLoop)}`);
    log(
      `  CPU (s) idle ${JSON.stringify(idleCpu)}; during ${JSON.stringify(duringCpu)}; ${deliveredInWindow} delivered in the window`,
    );
  }
  const summary = (latencies: number[]) => {
    latencies.sort((a, b) => a - b);
    return { calls: latencies.length, p50: ms(quantile(latencies, 0.5)), p99: ms(quantile(latencies, 0.99)) };
  };
  const all = { idle: summary(pooled.idle), during: summary(pooled.during) };
  const above = (during: number, idle: number) =>
    `${during >= idle ? '+' : ''}${Math.round((during / idle - 1) * 100)} %`;
  log(`unverified deliveries: ${receiving.unverified()}`);
  // What a delivery costs each process: CPU beyond the idle window, over the events delivered in the window.
  const deliveredInWindows = rounds.reduce((sum, round) => sum + round.deliveredInWindow, 0);
  const extraCpu = (role: keyof WindowCpu) =>
    ms(
      (1000 * rounds.reduce((sum, round) => sum + round.cpu.during[role] - round.cpu.idle[role], 0)) /
        Math.max(1, deliveredInWindows),
    );
  const perDelivery = { server: extraCpu('server'), postgres: extraCpu('postgres'), receiver: extraCpu('receiver') };

  const result = {
    when: new Date().toISOString(),
    machine: { cpus: os.cpus().length, load: os.loadavg() },
    rate: RATE,
    commitToDelivery: { writes, ...latency },
    bulk: { reviews: bulkCodes.length },
    rounds,
    pooled: all,
    cpuPerDeliveryMs: perDelivery,
    unverified: receiving.unverified(),
  };
  log(
    markdownTable([
      { measure: 'commit → delivery p50 (ms)', value: latency.p50 },
      { measure: 'commit → delivery p99 (ms)', value: latency.p99 },
      {
        measure: `${bulkCodes.length} reviews changed → all delivered (s), each round`,
        value: args.control ? 'not delivered (--control)' : rounds.map((round) => round.bulkSeconds).join(', '),
      },
      {
        measure: 'API p99 idle → during deliveries (ms), each round',
        value: rounds
          .map((round) => `${round.idle.p99} → ${round.during.p99} (${above(round.during.p99, round.idle.p99)})`)
          .join(', '),
      },
      {
        measure: 'CPU a delivery adds, server / PostgreSQL / receiver (ms)',
        value: args.control
          ? 'nothing delivered (--control)'
          : `${perDelivery.server} / ${perDelivery.postgres} / ${perDelivery.receiver}`,
      },
      {
        measure: `API p50 idle → during, ${all.idle.calls} calls pooled (ms)`,
        value: `${all.idle.p50} → ${all.during.p50} (${above(all.during.p50, all.idle.p50)})`,
      },
      {
        measure: `API p99 idle → during, ${all.idle.calls} calls pooled (ms)`,
        value: `${all.idle.p99} → ${all.during.p99} (${above(all.during.p99, all.idle.p99)})`,
      },
    ]),
  );
  const dir = path.resolve(import.meta.dirname, 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, `webhooks-${result.when.replaceAll(':', '-')}.json`),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  server.stop();
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanUp().then(() => process.exit()));
