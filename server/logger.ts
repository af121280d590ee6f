import pino from 'pino';
import { boundedError } from './log-errors';

// Structured JSON logs, one line an event (D-17, D-22), written by pino. The service's own Logger shape
// (`log.info(msg, fields)`) stays, a thin adapter, so no call site depends on pino. The API key never
// passes through here; callers log its display prefix at most. Every `error` field goes through
// boundedError (server/log-errors.ts): no SQL parameters or partner-supplied text, one stack, a size cap.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export type Logger = {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
};

/**
 * A logger at `level`. Lines go to stdout (pino's synchronous destination, so the last lines before an
 * exit are not lost), or to `write`, called once a line with the line and its newline (tests).
 */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const logger = pino(
    {
      level,
      // No pid/hostname on every line: the platform that collects the logs knows where they came from.
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { error: boundedError, err: boundedError },
    },
    write ? { write } : pino.destination({ sync: true }),
  );
  const at = (method: 'debug' | 'info' | 'warn' | 'error') => {
    const emit = logger[method].bind(logger);
    return (msg: string, fields?: Record<string, unknown>) => (fields ? emit(fields, msg) : emit(msg));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const silentLogger: Logger = createLogger('silent');
