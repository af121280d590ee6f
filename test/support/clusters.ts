import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

// Scratch PostgreSQL clusters on free ports of this machine, run as the `postgres` OS user (initdb refuses
// root), for the tests a second server needs: a streaming replica, a restore into another cluster.

export const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Why this machine cannot run scratch clusters with `tools` and server `libraries`, or undefined when it can. */
export function clustersUnavailable(tools: string[], libraries: string[] = []): string | undefined {
  if (!process.env.TEST_DATABASE_URL) return 'TEST_DATABASE_URL is unset (the real-service run)';
  for (const tool of tools) if (!existsSync(path.join(PG_BIN, tool))) return `${PG_BIN}/${tool} is missing`;
  for (const library of libraries) {
    const file = path.join(PG_BIN, '..', 'lib', `${library}.so`);
    if (!existsSync(file)) return `${path.normalize(file)} is missing`;
  }
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
  } catch {
    return 'there is no postgres OS user';
  }
  if (process.getuid?.() !== 0) return 'starting a cluster as the postgres user needs root (runuser)';
  return undefined;
}

/** A command of PostgreSQL's as the postgres OS user (the clusters' owner). */
export const asPostgres = (tool: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, tool), ...args], { stdio: 'pipe' }).toString();

/** The uid of the postgres OS user, for the folders its clusters live in. */
export const postgresUid = () => Number(execFileSync('id', ['-u', 'postgres']).toString().trim());

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Stops a cluster at once if it runs; safe to call more than once. */
export function stopCluster(cluster: { dir: string } | undefined) {
  if (!cluster || !existsSync(path.join(cluster.dir, 'postmaster.pid'))) return;
  try {
    asPostgres('pg_ctl', ['-D', cluster.dir, '-m', 'immediate', 'stop']);
  } catch {}
}
