import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import { metrics } from '../trpc/metrics';
import type { ThreadMessage } from './delivery-thread-main';

// Webhook delivery on PostgreSQL runs in a thread of its own (D-28): building, signing and sending events
// take turns of that thread's event loop, never of the one that answers calls. The thread opens its own
// connections from the same settings (process.env); instances still coordinate through the database alone.

/** The thread's module beside this one: compiled `.js` in dist/, the TypeScript source under tsx. */
const ENTRY = new URL(`./delivery-thread-main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
/** A thread that failed is started again after this long: the leases it held run out meanwhile. */
const RESTART_MS = 1_000;

export class DeliveryThread {
  private thread: Worker | undefined;
  private stopping = false;
  private lagSeconds = 0;
  private disabled = 0;

  constructor(
    private readonly log: Logger,
    /** The thread's module; tests give one of their own. */
    private readonly entry: URL = ENTRY,
  ) {}

  largestLagSeconds(): number {
    return this.lagSeconds;
  }

  disabledEndpoints(): number {
    return this.disabled;
  }

  /** Starts the thread; resolves once it listens for changes (or failed to start). */
  async start(): Promise<void> {
    const thread = new Worker(this.entry);
    this.thread = thread;
    thread.on('message', (message: ThreadMessage) => {
      if (message.type !== 'state') return;
      this.lagSeconds = message.lagSeconds;
      this.disabled = message.disabledEndpoints;
      for (const [outcome, count] of Object.entries(message.attempts))
        if (count > 0) metrics?.webhookDeliveries.inc({ outcome }, count);
    });
    thread.on('error', (error) => this.log.error({ error }, 'webhook delivery thread failed'));
    thread.on('exit', (code) => {
      if (this.stopping || this.thread !== thread) return;
      this.log.error({ code }, 'webhook delivery thread ended; starting it again');
      setTimeout(() => {
        if (!this.stopping) void this.start();
      }, RESTART_MS).unref();
    });
    await Promise.race([waitFor(thread, 'started'), exitOf(thread)]);
  }

  /** Ends the thread's work as WebhookWorker.stop does, then the thread; resolves once it exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    const thread = this.thread;
    if (!thread || thread.threadId === -1) return;
    const exited = exitOf(thread);
    thread.postMessage('stop');
    // Its connections closed and its last report sent, the thread has nothing left to finish.
    await Promise.race([waitFor(thread, 'stopped'), exited]);
    await thread.terminate();
  }
}

/** Resolves when the thread ended, however (its failure is logged by the 'error' listener, not thrown here). */
function exitOf(thread: Worker): Promise<void> {
  return new Promise((resolve) => thread.once('exit', () => resolve()));
}

function waitFor(thread: Worker, type: ThreadMessage['type']): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: ThreadMessage) => {
      if (message.type !== type) return;
      thread.off('message', listener);
      resolve();
    };
    thread.on('message', listener);
  });
}
