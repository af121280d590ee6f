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
  });

  it.each([
    [{ TRUST_PROXY: 'yes please!' }, 'TRUST_PROXY'],
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
