import { runDailyAggregate } from '../db/aggregate';
import type { Db } from '../db/client';
import { addDays, kstDayStart, kstToday } from '../db/kst';
import { pruneReviewChanges } from '../db/queries/review-changes';
import { pruneWebhookAttempts } from '../db/queries/webhook-deliveries';
import type { Logger } from './logger';
import { metrics } from './trpc/metrics';

/** How long after KST midnight the daily run starts: late enough that yesterday's collection has landed. */
export const RUN_AFTER_MIDNIGHT_MS = 5 * 60 * 1000;
/** How soon a run that found another run under way, or failed, tries again. */
export const RETRY_MS = 5 * 60 * 1000;

type Deps = {
  db: Db;
  log: Logger;
  now: () => Date;
  retryMs?: number;
  /** How long the review change feed keeps a change (D-26); pruned after each run. Default 30 days. */
  retentionDays?: number;
};

/** The next instant strictly after `now` at RUN_AFTER_MIDNIGHT_MS past a KST midnight (D-5). */
export function nextRunAt(now: Date): Date {
  const runOn = (day: string) => new Date(kstDayStart(day).getTime() + RUN_AFTER_MIDNIGHT_MS);
  const today = runOn(kstToday(now));
  return today.getTime() > now.getTime() ? today : runOn(addDays(kstToday(now), 1));
}

/** Runs the daily aggregate (D-6) and prunes the change feed (D-26) after each KST midnight; `stop` waits (D-17). */
export function scheduleDailyAggregate(deps: Deps): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const arm = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runLogged(deps)
        .then((settled) => {
          const now = deps.now();
          const untilNext = nextRunAt(now).getTime() - now.getTime();
          arm(settled ? untilNext : Math.min(deps.retryMs ?? RETRY_MS, untilNext));
        })
        .finally(() => {
          running = undefined;
        });
    }, delayMs);
    timer.unref();
  };
  arm(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** One run, logged with its outcome or its failure; true when yesterday is covered. Never throws. */
async function runLogged(deps: Deps): Promise<boolean> {
  const started = Date.now();
  try {
    const run = await runDailyAggregate(deps.db, { now: deps.now() });
    const ms = Date.now() - started;
    countRun(run.outcome, ms);
    if (run.outcome === 'built') deps.log.info({ ...run.result, ms }, 'daily aggregate built');
    else if (run.outcome === 'covered') deps.log.debug({ ms }, 'daily aggregate already built');
    else deps.log.info({ ms }, 'daily aggregate under way elsewhere; will check again');
    await pruneLogged(deps);
    return run.outcome !== 'busy';
  } catch (error) {
    const ms = Date.now() - started;
    countRun('failed', ms);
    deps.log.error({ error, ms }, 'daily aggregate failed; will retry');
    return false;
  }
}

/** The feed's changes past the retention go (D-26); a failure is logged and tried again at the next run. */
async function pruneLogged(deps: Deps): Promise<void> {
  const before = new Date(deps.now().getTime() - (deps.retentionDays ?? 30) * 86_400_000);
  try {
    const pruned = await pruneReviewChanges(deps.db, before);
    if (pruned > 0) deps.log.info({ pruned, before }, 'review changes past the retention pruned');
  } catch (error) {
    deps.log.error({ error }, 'pruning review changes failed; will retry at the next run');
  }
  // Webhook attempts are kept 30 days (D-28), whatever the feed's retention.
  try {
    const attempts = await pruneWebhookAttempts(deps.db, new Date(deps.now().getTime() - 30 * 86_400_000));
    if (attempts > 0) deps.log.info({ attempts }, 'webhook attempts past 30 days pruned');
  } catch (error) {
    deps.log.error({ error }, 'pruning webhook attempts failed; will retry at the next run');
  }
}

/** D-22: aggregate runs by outcome, and how long they took. */
function countRun(outcome: string, ms: number) {
  metrics?.aggregateRuns.inc({ outcome });
  metrics?.aggregateDuration.observe({ outcome }, ms / 1000);
}
