import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../server/config';

// D-2: the environment is validated at start; a bad value stops the process with a line naming it.
describe('configuration', () => {
  it('defaults to the embedded setup', () => {
    const config = parseConfig({});
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: 100,
    });
  });

  it('keeps metrics and tracing off unless set, and metrics off the partner port (D-22)', () => {
    expect(parseConfig({ METRICS_PORT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toMatchObject({
      METRICS_PORT: undefined,
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
    });
    expect(parseConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' })).toMatchObject({
      METRICS_PORT: 9464,
      METRICS_HOST: '0.0.0.0',
    });
    expect(() => parseConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(/METRICS_PORT/);
    expect(() => parseConfig({ METRICS_PORT: '3000' })).toThrow(/METRICS_PORT/);
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe(
      'http://collector:4318',
    );
  });

  it('treats empty values as unset', () => {
    const config = parseConfig({ DATABASE_URL: '', PORT: '' });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.PORT).toBe(3000);
  });

  it('reads the production variables', () => {
    const config = parseConfig({
      DATABASE_URL: 'postgres://u@db:5432/partner',
      REDIS_URL: 'redis://cache:6379',
      PORT: '8080',
      RATE_LIMIT_PER_MINUTE: '250',
    });
    expect(config).toMatchObject({ PORT: 8080, RATE_LIMIT_PER_MINUTE: 250, REDIS_URL: 'redis://cache:6379' });
  });

  it('reads which proxies to trust for the client address', () => {
    expect(parseConfig({}).TRUST_PROXY).toBeUndefined();
    expect(parseConfig({ TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
    expect(parseConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).TRUST_PROXY).toBe('loopback, 10.0.0.0/8');
    expect(parseConfig({ TRUST_PROXY: '172.18.0.5,fd00::/8, uniquelocal' }).TRUST_PROXY).toBe(
      '172.18.0.5,fd00::/8, uniquelocal',
    );
  });

  it('gives the drain time room for a call at its deadline and for closing the stores (D-20)', () => {
    expect(parseConfig({})).toMatchObject({ REQUEST_DEADLINE_MS: 10_000, DRAIN_TIMEOUT_MS: 15_000 });
    expect(parseConfig({ REQUEST_DEADLINE_MS: '3000' }).DRAIN_TIMEOUT_MS).toBe(8_000);
    expect(parseConfig({ REQUEST_DEADLINE_MS: '3000', DRAIN_TIMEOUT_MS: '5001' }).DRAIN_TIMEOUT_MS).toBe(5_001);
    expect(() => parseConfig({ REQUEST_DEADLINE_MS: '3000', DRAIN_TIMEOUT_MS: '5000' })).toThrow(
      /^invalid configuration: DRAIN_TIMEOUT_MS must exceed REQUEST_DEADLINE_MS by more than 2000/,
    );
  });

  it('sizes the database pool and bounds the wait for a connection below the deadline (D-21)', () => {
    expect(parseConfig({})).toMatchObject({ DB_POOL_SIZE: 10, DB_POOL_WAIT_MS: 1_000 });
    expect(parseConfig({ DB_POOL_SIZE: '25', DB_POOL_WAIT_MS: '250' })).toMatchObject({
      DB_POOL_SIZE: 25,
      DB_POOL_WAIT_MS: 250,
    });
    // A short deadline shortens the default wait with it.
    expect(parseConfig({ REQUEST_DEADLINE_MS: '2000' }).DB_POOL_WAIT_MS).toBe(500);
  });

  it("bounds a statement and a wait for a lock below the deadline, with PostgreSQL's own timeouts (D-20, D-21)", () => {
    expect(parseConfig({})).toMatchObject({ DB_STATEMENT_TIMEOUT_MS: 8_000, DB_LOCK_TIMEOUT_MS: 1_000 });
    // A short deadline shortens both defaults with it.
    expect(parseConfig({ REQUEST_DEADLINE_MS: '500' })).toMatchObject({
      DB_STATEMENT_TIMEOUT_MS: 400,
      DB_LOCK_TIMEOUT_MS: 400,
    });
  });

  it('starts at most WEBHOOK_DELIVERIES_PER_SECOND webhook attempts a second per instance, 100 unless set (D-28)', () => {
    expect(parseConfig({}).WEBHOOK_DELIVERIES_PER_SECOND).toBe(100);
    expect(parseConfig({ WEBHOOK_DELIVERIES_PER_SECOND: '40' }).WEBHOOK_DELIVERIES_PER_SECOND).toBe(40);
    expect(() => parseConfig({ WEBHOOK_DELIVERIES_PER_SECOND: '0' })).toThrow(
      /^invalid configuration: WEBHOOK_DELIVERIES_PER_SECOND/,
    );
  });

  it('holds a webhook event for WEBHOOK_LEASE_MS while attempting it, a minute unless set (D-28)', () => {
    expect(parseConfig({}).WEBHOOK_LEASE_MS).toBe(60_000);
    expect(parseConfig({ WEBHOOK_LEASE_MS: '5000' }).WEBHOOK_LEASE_MS).toBe(5_000);
    expect(() => parseConfig({ WEBHOOK_LEASE_MS: '999' })).toThrow(/^invalid configuration: WEBHOOK_LEASE_MS/);
  });

  it('reads the read replicas of the primary, their lag bound and check interval (D-23)', () => {
    expect(parseConfig({})).toMatchObject({
      DATABASE_REPLICA_URLS: [],
      DATABASE_REPLICA_MAX_LAG_MS: 5_000,
      DATABASE_REPLICA_CHECK_MS: 1_000,
    });
    const config = parseConfig({
      DATABASE_URL: 'postgres://u@primary:5432/partner',
      DATABASE_REPLICA_URLS: ' postgres://u@replica-1:5432/partner, postgresql://u@replica-2/partner ,',
      DATABASE_REPLICA_MAX_LAG_MS: '2000',
      DATABASE_REPLICA_CHECK_MS: '250',
    });
    expect(config.DATABASE_REPLICA_URLS).toEqual([
      'postgres://u@replica-1:5432/partner',
      'postgresql://u@replica-2/partner',
    ]);
    expect(config).toMatchObject({ DATABASE_REPLICA_MAX_LAG_MS: 2_000, DATABASE_REPLICA_CHECK_MS: 250 });
  });

  it.each([
    // The embedded PGlite has no replicas.
    [{ DATABASE_REPLICA_URLS: 'postgres://u@replica/partner' }, 'DATABASE_REPLICA_URLS'],
    [{ DATABASE_URL: 'postgres://u@p/partner', DATABASE_REPLICA_URLS: 'redis://r:6379' }, 'DATABASE_REPLICA_URLS.0'],
    [{ DATABASE_REPLICA_CHECK_MS: '5000' }, 'DATABASE_REPLICA_CHECK_MS'],
    [{ DATABASE_REPLICA_MAX_LAG_MS: '10' }, 'DATABASE_REPLICA_MAX_LAG_MS'],
    [{ DB_POOL_SIZE: '0' }, 'DB_POOL_SIZE'],
    [{ DB_POOL_WAIT_MS: '10000' }, 'DB_POOL_WAIT_MS'],
    [{ DB_POOL_WAIT_MS: '0' }, 'DB_POOL_WAIT_MS'],
    [{ DB_LOCK_TIMEOUT_MS: '0' }, 'DB_LOCK_TIMEOUT_MS'],
    [{ DB_LOCK_TIMEOUT_MS: '9000' }, 'DB_LOCK_TIMEOUT_MS'],
    [{ TRUST_PROXY: 'yes please!' }, 'TRUST_PROXY'],
    // Express would take it, then fail on the first request it judged.
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'loopback, 10.0.0.300' }, 'TRUST_PROXY'],
    [{ DRAIN_TIMEOUT_MS: '10000' }, 'DRAIN_TIMEOUT_MS'],
    [{ HEADERS_TIMEOUT_MS: '500' }, 'HEADERS_TIMEOUT_MS'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ DATABASE_URL: 'mysql://x/y' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ UPSTASH_REDIS_REST_URL: 'https://x.upstash.io' }, 'UPSTASH_REDIS_REST_TOKEN'],
  ])('rejects %j naming %s', (env, name) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(new RegExp(`^invalid configuration: ${name} `));
  });
});
