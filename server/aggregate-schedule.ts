import { runDailyAggregate } from '../db/aggregate';
import type { Db } from '../db/client';
import { addDays, kstDayStart, kstToday } from '../db/kst';
import type { Logger } from './logger';

/** How long after KST midnight the daily run starts: late enough that yesterday's collection has landed. */
export const RUN_AFTER_MIDNIGHT_MS = 5 * 60 * 1000;

type Deps = { db: Db; log: Logger; now: () => Date };

/** The next instant strictly after `now` at RUN_AFTER_MIDNIGHT_MS past a KST midnight (D-5). */
export function nextRunAt(now: Date): Date {
  const runOn = (day: string) => new Date(kstDayStart(day).getTime() + RUN_AFTER_MIDNIGHT_MS);
  const today = runOn(kstToday(now));
  return today.getTime() > now.getTime() ? today : runOn(addDays(kstToday(now), 1));
}

/**
 * Runs the daily aggregate (D-6) once a day shortly after KST midnight, in every mode: each instance
 * schedules it, and one of them builds (runDailyAggregate: try-lock, skip when yesterday is covered).
 * The timer never keeps the process alive; `stop` cancels it and waits for a run in progress, so the
 * database can be closed after it (shutdown, D-17). A failed run is logged; the next day's run tries again.
 */
export function scheduleDailyAggregate(deps: Deps): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const arm = () => {
    if (stopped) return;
    const now = deps.now();
    timer = setTimeout(() => {
      running = runLogged(deps).finally(() => {
        running = undefined;
        arm();
      });
    }, nextRunAt(now).getTime() - now.getTime());
    timer.unref();
  };

  arm();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** One run, logged with its result or its failure; never throws. */
async function runLogged(deps: Deps): Promise<void> {
  const started = Date.now();
  try {
    const result = await runDailyAggregate(deps.db, { now: deps.now() });
    if (result) deps.log.info('daily aggregate built', { ...result, ms: Date.now() - started });
    else deps.log.info('daily aggregate already built or building elsewhere', { ms: Date.now() - started });
  } catch (error) {
    deps.log.error('daily aggregate failed', { error, ms: Date.now() - started });
  }
}
