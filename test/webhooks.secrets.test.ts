import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, openSecret, sealSecret } from '../db/webhook-secrets';
import { parseConfig } from '../server/config';

describe('webhook signing secrets (D-28)', () => {
  const key = randomBytes(32);

  it('are whsec_ and base64, as the Standard Webhooks specification spells them', () => {
    expect(newSigningSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  });

  it('are stored sealed: the stored text holds no part of the secret, and opens with the key', () => {
    const secret = newSigningSecret();
    const sealed = sealSecret(key, 'wh_abcdefghijklmnop', secret);
    expect(sealed).not.toContain(secret.slice(6, 14));
    expect(openSecret(key, 'wh_abcdefghijklmnop', sealed)).toBe(secret);
  });

  it('do not open under another key, nor moved to another endpoint', () => {
    const sealed = sealSecret(key, 'wh_abcdefghijklmnop', newSigningSecret());
    expect(() => openSecret(randomBytes(32), 'wh_abcdefghijklmnop', sealed)).toThrow(/does not open/);
    expect(() => openSecret(key, 'wh_bbbbbbbbbbbbbbbb', sealed)).toThrow(/does not open/);
  });

  it('need WEBHOOK_SECRETS_KEY to be 32 bytes in base64, and name the variable without its value', () => {
    expect(parseConfig({ WEBHOOK_SECRETS_KEY: key.toString('base64') }).WEBHOOK_SECRETS_KEY).toEqual(key);
    expect(parseConfig({}).WEBHOOK_SECRETS_KEY).toBeUndefined();
    const short = randomBytes(16).toString('base64');
    expect(() => parseConfig({ WEBHOOK_SECRETS_KEY: short })).toThrow(/^invalid configuration: WEBHOOK_SECRETS_KEY/);
    expect(() => parseConfig({ WEBHOOK_SECRETS_KEY: short })).not.toThrow(short);
  });

  it('private targets are refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS=1', () => {
    expect(parseConfig({}).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(parseConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' }).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
    expect(() => parseConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' })).toThrow(/WEBHOOK_ALLOW_PRIVATE_TARGETS/);
  });
});
