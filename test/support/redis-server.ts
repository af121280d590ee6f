import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';

/** Whether Debian's redis-server is installed: tests that need a Redis of their own are skipped without it. */
export const REDIS_SERVER_INSTALLED = spawnSync('redis-server', ['--version']).status === 0;

/** A Redis this test started for itself, on a free loopback port, stopped by `stop()`. */
export type OwnRedis = { url: string; stop(): Promise<void> };

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

/** Resolves once redis-server says it accepts connections; rejects if it exits first (its port was taken). */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output.slice(-300)}`)));
    child.once('error', reject);
  });
}

/**
 * Starts a Redis that nothing else uses, for what must never touch a shared one (SCRIPT FLUSH empties every
 * client's script cache). It keeps nothing on disk.
 */
export async function startOwnRedis(): Promise<OwnRedis> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(child, 'exit').catch(() => undefined);
    try {
      await ready(child);
    } catch (error) {
      // Another process took the free port between the probe and redis-server's bind: try another.
      if (attempt < 3) continue;
      throw error;
    }
    return {
      url: `redis://127.0.0.1:${port}`,
      async stop() {
        child.kill('SIGTERM');
        await exited;
      },
    };
  }
}
