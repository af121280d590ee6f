import { isIP } from 'node:net';
import { z } from 'zod';
import type { OpenOptions } from '../db/client';

// D-2: the environment, parsed once at start (the webhook delivery thread parses its copy of it). Nothing
// else reads process.env.

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(emptyAsUndefined, schema.optional());
const whole = () => z.string().regex(/^\d+$/, 'must be a whole number').transform(Number);
const integer = (min: number, max: number, fallback: number) =>
  z.preprocess(emptyAsUndefined, whole().pipe(z.number().int().min(min).max(max)).optional().default(fallback));
const url = (protocols: RegExp) =>
  z.url({ protocol: protocols, error: `must be a URL (${protocols.source.replaceAll('^', '').replaceAll('$', '')})` });

/** A key sealing webhook secrets (D-28): 32 bytes in base64. */
const secretsKey = () =>
  z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(value), {
      error: 'must be 32 bytes in base64 (openssl rand -base64 32)',
    })
    .transform((value) => Buffer.from(value, 'base64'));

/** D-20: of the drain time, what closing the database and the limiter keep after the requests are answered. */
export const STORE_CLOSE_RESERVE_MS = 2_000;

/** An entry of express's "trust proxy" list: an address, a subnet (address/prefix) or one of its names. */
function isProxy(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

export const configSchema = z
  .object({
    // Each variable: docs/operations.md (D-14, D-20 to D-23); the bounds between them are checked below.
    DATABASE_URL: optional(url(/^postgres(ql)?$/)),
    DATABASE_REPLICA_URLS: z.preprocess(
      (value) => (typeof value === 'string' ? value.split(',').flatMap((item) => item.trim() || []) : value),
      z.array(url(/^postgres(ql)?$/)).default([]),
    ),
    DATABASE_REPLICA_MAX_LAG_MS: integer(100, 600_000, 5_000),
    DATABASE_REPLICA_CHECK_MS: integer(50, 60_000, 1_000),
    REDIS_URL: optional(url(/^rediss?$/)),
    UPSTASH_REDIS_REST_URL: optional(url(/^https?$/)),
    UPSTASH_REDIS_REST_TOKEN: optional(z.string()),
    PORT: integer(0, 65535, 3000),
    HOST: z.preprocess(emptyAsUndefined, z.string().optional().default('127.0.0.1')),
    LOG_LEVEL: z.preprocess(emptyAsUndefined, z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info')),
    RATE_LIMIT_PER_MINUTE: integer(1, 1_000_000, 100),
    REVIEW_CHANGES_RETENTION_DAYS: integer(1, 3_650, 30),
    FEED_STALL_WARN_SECONDS: integer(1, 86_400, 60),
    WEBHOOK_SECRETS_KEY: optional(secretsKey()),
    /** The key being replaced, read by `webhooks reseal-secrets` only. */
    WEBHOOK_SECRETS_OLD_KEY: optional(secretsKey()),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: z.preprocess(
      emptyAsUndefined,
      z
        .enum(['0', '1'])
        .default('0')
        .transform((v) => v === '1'),
    ),
    WEBHOOK_LEASE_MS: integer(1_000, 3_600_000, 60_000),
    WEBHOOK_DELIVERIES_PER_SECOND: integer(1, 100_000, 100),
    REQUEST_DEADLINE_MS: integer(100, 600_000, 10_000),
    DB_STATEMENT_TIMEOUT_MS: optional(whole()),
    DB_LOCK_TIMEOUT_MS: optional(whole()),
    DB_CONNECT_TIMEOUT_MS: integer(100, 60_000, 3_000),
    DB_POOL_SIZE: integer(1, 1_000, 10),
    DB_POOL_WAIT_MS: optional(whole()),
    DRAIN_TIMEOUT_MS: optional(whole()),
    MAX_CONNECTIONS: integer(1, 1_000_000, 4_000),
    HEADERS_TIMEOUT_MS: integer(1_000, 600_000, 10_000),
    KEEP_ALIVE_TIMEOUT_MS: integer(1_000, 600_000, 65_000),
    SEND_TIMEOUT_MS: integer(1_000, 600_000, 30_000),
    METRICS_PORT: optional(whole().pipe(z.number().int().min(0).max(65535))),
    METRICS_HOST: optional(z.string()),
    OTEL_EXPORTER_OTLP_ENDPOINT: optional(url(/^https?$/)),
    TRUST_PROXY: z.preprocess(
      emptyAsUndefined,
      z
        .string()
        .refine(
          (value) => /^\d+$/.test(value) || value.split(',').every((item) => isProxy(item.trim())),
          'must be a hop count or a list of addresses, subnets (address/prefix) or loopback, linklocal, uniquelocal',
        )
        .transform((value) => (/^\d+$/.test(value) ? Number(value) : value))
        .optional(),
    ),
  })
  .transform(({ DB_STATEMENT_TIMEOUT_MS, DB_LOCK_TIMEOUT_MS, DB_POOL_WAIT_MS, DRAIN_TIMEOUT_MS, ...env }) => {
    const statementTimeoutMs = DB_STATEMENT_TIMEOUT_MS ?? Math.max(50, Math.floor(env.REQUEST_DEADLINE_MS * 0.8));
    return {
      ...env,
      DRAIN_TIMEOUT_MS: DRAIN_TIMEOUT_MS ?? env.REQUEST_DEADLINE_MS + 5_000,
      // By default a statement gets most of the deadline, leaving time to answer.
      DB_STATEMENT_TIMEOUT_MS: statementTimeoutMs,
      DB_LOCK_TIMEOUT_MS: DB_LOCK_TIMEOUT_MS ?? Math.min(1_000, statementTimeoutMs),
      // A call that cannot get a connection fails well before its deadline.
      DB_POOL_WAIT_MS: DB_POOL_WAIT_MS ?? Math.min(1_000, Math.floor(env.REQUEST_DEADLINE_MS / 4)),
    };
  })
  .superRefine((env, ctx) => {
    const fail = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (env.DB_STATEMENT_TIMEOUT_MS < 1 || env.DB_STATEMENT_TIMEOUT_MS >= env.REQUEST_DEADLINE_MS)
      fail('DB_STATEMENT_TIMEOUT_MS', 'must be at least 1 and below REQUEST_DEADLINE_MS');
    if (env.DB_LOCK_TIMEOUT_MS < 1 || env.DB_LOCK_TIMEOUT_MS > env.DB_STATEMENT_TIMEOUT_MS)
      fail('DB_LOCK_TIMEOUT_MS', 'must be at least 1 and at most DB_STATEMENT_TIMEOUT_MS');
    if (env.DB_POOL_WAIT_MS < 1 || env.DB_POOL_WAIT_MS >= env.REQUEST_DEADLINE_MS)
      fail('DB_POOL_WAIT_MS', 'must be at least 1 and below REQUEST_DEADLINE_MS');
    // The embedded PGlite is one process's own database: nothing can replicate it.
    if (env.DATABASE_REPLICA_URLS.length > 0 && !env.DATABASE_URL)
      fail('DATABASE_REPLICA_URLS', 'needs DATABASE_URL (the primary)');
    if (env.DATABASE_REPLICA_CHECK_MS >= env.DATABASE_REPLICA_MAX_LAG_MS)
      fail('DATABASE_REPLICA_CHECK_MS', 'must be below DATABASE_REPLICA_MAX_LAG_MS');
    if (env.METRICS_PORT !== undefined && env.METRICS_PORT !== 0 && env.METRICS_PORT === env.PORT)
      fail('METRICS_PORT', 'must not be PORT (metrics never share the partner port)');
    // A call's bytes may stand still while it is answered, up to its deadline.
    if (env.SEND_TIMEOUT_MS <= env.REQUEST_DEADLINE_MS) fail('SEND_TIMEOUT_MS', 'must be above REQUEST_DEADLINE_MS');
    if (env.DRAIN_TIMEOUT_MS <= env.REQUEST_DEADLINE_MS + STORE_CLOSE_RESERVE_MS)
      fail(
        'DRAIN_TIMEOUT_MS',
        `must exceed REQUEST_DEADLINE_MS by more than ${STORE_CLOSE_RESERVE_MS} (closing the stores)`,
      );
    if (Boolean(env.UPSTASH_REDIS_REST_URL) !== Boolean(env.UPSTASH_REDIS_REST_TOKEN))
      fail(
        env.UPSTASH_REDIS_REST_URL ? 'UPSTASH_REDIS_REST_TOKEN' : 'UPSTASH_REDIS_REST_URL',
        'UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN go together',
      );
  });

export type Config = z.output<typeof configSchema>;

export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new ConfigError(`invalid configuration: ${issue?.path.join('.') ?? '?'} ${issue?.message ?? ''}`.trim());
}

/** D-20, D-21: the server's connections carry PostgreSQL's statement and lock bounds and a pool of slots. */
export function serverDatabaseOptions(config: Config, url: string): OpenOptions {
  return {
    url,
    maxConnections: config.DB_POOL_SIZE,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    bounds: {
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS,
      poolWaitMs: config.DB_POOL_WAIT_MS,
    },
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}
