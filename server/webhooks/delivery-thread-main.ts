import { parentPort } from 'node:worker_threads';
import { listenerOf, openDatabase } from '../../db/client';
import { parseConfig, serverDatabaseOptions } from '../config';
import { createLogger, flushLogs, logUnhandledRejections } from '../logger';
import { type AttemptCount, WebhookWorker } from './worker';

// The delivery thread (server/webhooks/delivery-thread.ts): a WebhookWorker on connections of its own, with
// the settings of the process that started it. It reports its metrics to that process, which serves them.

export type ThreadMessage =
  | { type: 'started' }
  | { type: 'stopped' }
  | {
      type: 'state';
      lagSeconds: number;
      disabledEndpoints: number;
      /** Attempts since the last report, by outcome. */
      attempts: Record<AttemptCount, number>;
    };

/** How often the thread reports its lag and the attempts it made. */
const REPORT_MS = 1_000;

async function main(port: NonNullable<typeof parentPort>) {
  const config = parseConfig(process.env);
  const log = createLogger(config.LOG_LEVEL);
  // As on the main thread: a driver's failed background work is logged, and the thread goes on.
  logUnhandledRejections(log);
  const secretsKey = config.WEBHOOK_SECRETS_KEY;
  if (!config.DATABASE_URL || !secretsKey)
    throw new Error('the delivery thread needs DATABASE_URL and WEBHOOK_SECRETS_KEY');
  const database = await openDatabase(serverDatabaseOptions(config, config.DATABASE_URL));
  let attempts: Record<AttemptCount, number> = { delivered: 0, rejected: 0, failed: 0 };
  const worker = new WebhookWorker({
    db: database.control,
    listen: listenerOf(database.db),
    log,
    secretsKey,
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    leaseMs: config.WEBHOOK_LEASE_MS,
    perSecond: config.WEBHOOK_DELIVERIES_PER_SECOND,
    countAttempt: (outcome) => {
      attempts[outcome]++;
    },
  });
  const report = () => {
    port.postMessage({
      type: 'state',
      lagSeconds: worker.largestLagSeconds(),
      disabledEndpoints: worker.disabledEndpoints(),
      attempts,
    } satisfies ThreadMessage);
    attempts = { delivered: 0, rejected: 0, failed: 0 };
  };
  const reporting = setInterval(report, REPORT_MS);
  port.on('message', async (message: unknown) => {
    if (message !== 'stop') return;
    clearInterval(reporting);
    await worker.stop();
    report();
    await database.close();
    flushLogs();
    port.postMessage({ type: 'stopped' } satisfies ThreadMessage);
  });
  await worker.start();
  port.postMessage({ type: 'started' } satisfies ThreadMessage);
}

if (parentPort) await main(parentPort);
