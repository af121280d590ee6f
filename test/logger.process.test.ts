import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';

// The log goes to stdout in batches (server/logger.ts): a line waits for its batch, never for the process
// to end, and what is still waiting when the process exits is written then.

/** A process that logs `first`, waits for a line on stdin, then logs a burst and `last` and exits. */
const script = `
import { createLogger } from './server/logger.ts';
const log = createLogger('info');
log.info('first');
process.stdin.once('data', () => {
  for (let i = 0; i < 200; i++) log.info({ i }, 'burst');
  log.info('last');
  process.exit(0);
});`;

describe('the log on stdout', () => {
  it('writes a line while the process idles, and every line still waiting when it exits', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const messages = () =>
      out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; i?: number });
    try {
      await eventually(messages, (lines) => lines.length > 0);
      expect(messages().map((line) => line.msg)).toEqual(['first']);
      child.stdin.write('go\n');
      expect(await exited).toBe(0);
      const lines = messages();
      expect(lines.map((line) => line.msg)).toEqual(['first', ...Array(200).fill('burst'), 'last']);
      expect(lines.filter((line) => line.msg === 'burst').map((line) => line.i)).toEqual([...Array(200).keys()]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('a promise nobody awaited that failed', () => {
  it('is logged with its cause, and the process goes on', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `
import { createLogger, logUnhandledRejections } from './server/logger.ts';
const log = createLogger('info');
logUnhandledRejections(log);
Promise.reject(new Error('connection destroyed'));
setTimeout(() => { log.info('still serving'); process.exit(0); }, 100);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
    const lines = out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; level: string; error?: { message?: string } });
    expect(lines.map((line) => line.msg)).toEqual(['unhandled rejection', 'still serving']);
    expect(lines[0]).toMatchObject({ level: 'error', error: { message: 'connection destroyed' } });
  });
});
