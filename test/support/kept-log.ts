import { createLogger } from '../../server/logger';

/**
 * A logger whose lines are kept as they are written, with a wait on them that is an event, not a poll
 * with a deadline: a busy machine makes it later, never red. The test's own timeout ends a wait for a
 * line that never comes.
 */
export function keptLog() {
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  const log = createLogger('info', (line) => {
    lines.push(line);
    for (const wake of waiters.splice(0)) wake();
  });
  /** Resolves once the lines so far satisfy `seen`. */
  const until = async (seen: (kept: string[]) => boolean) => {
    while (!seen(lines)) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  /** Resolves once a line holds `text`. */
  const written = (text: string) => until((kept) => kept.some((line) => line.includes(text)));
  return { lines, log, until, written };
}
