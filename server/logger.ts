import pino from 'pino';
import type { Config } from './config';
import { boundedError } from './log-errors';

// JSON logs, one line an event (D-17, D-22); never the API key, and every `error` field through boundedError.

export type Logger = pino.Logger;

/** Lines wait for this many bytes, or for LOG_FLUSH_MS, before they are written to stdout. */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_MS = 100;

let stdout: ReturnType<typeof pino.destination> | undefined;

/** stdout, shared by every logger, written in batches (D-22): one system call for many lines; the rest at exit. */
function batchedStdout() {
  if (!stdout) {
    stdout = pino.destination({ sync: true, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS });
    process.on('exit', flushLogs);
  }
  return stdout;
}

/** Writes the lines still waiting for their batch now: the start's lines, before the banner that follows them. */
export function flushLogs(): void {
  try {
    stdout?.flushSync();
  } catch {
    // A closed stdout (EPIPE) takes the lines with it.
  }
}

/** A logger at `level`, to stdout or to `write` (tests), called once a line. */
export function createLogger(level: Config['LOG_LEVEL'], write?: (line: string) => void): Logger {
  return pino(
    {
      level,
      // No pid/hostname on every line: the platform that collects the logs knows where they came from.
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { error: boundedError, err: boundedError },
    },
    write ? { write } : level === 'silent' ? { write: () => {} } : batchedStdout(),
  );
}

export const silentLogger: Logger = createLogger('silent');

/** A failed promise nobody awaited (a driver's background work) is logged; every request has its own deadline. */
export function logUnhandledRejections(log: Logger): void {
  process.on('unhandledRejection', (reason) => log.error({ error: reason }, 'unhandled rejection'));
}
