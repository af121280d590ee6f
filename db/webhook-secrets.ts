import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// An endpoint's signing secret (D-28): `whsec_` and base64 of random bytes, as the Standard Webhooks
// specification spells it. Stored sealed with AES-256-GCM under WEBHOOK_SECRETS_KEY, bound to its endpoint
// (associated data), so a dump alone reveals no secret and a sealed one moved to another row does not open.

const SECRET_BYTES = 24;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function newSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export function sealSecret(key: Buffer, endpointId: string, secret: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(endpointId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, sealed, cipher.getAuthTag()]).toString('base64');
}

/** The secret, or a throw when the key is not the one it was sealed with (or the row was altered). */
export function openSecret(key: Buffer, endpointId: string, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64');
  const nonce = bytes.subarray(0, NONCE_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(endpointId)).setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, -TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new Error(`the secret of webhook ${endpointId} does not open with WEBHOOK_SECRETS_KEY (another key?)`);
  }
}

/** What an endpoint signs with now: its secret, and the one it replaced while that is in its overlap. */
export function secretsInUse(
  key: Buffer,
  endpoint: { id: string; secret: string; previousSecret: string | null; previousSecretUntil: Date | null },
  now: Date,
): string[] {
  const secrets = [openSecret(key, endpoint.id, endpoint.secret)];
  if (endpoint.previousSecret && endpoint.previousSecretUntil && endpoint.previousSecretUntil > now)
    secrets.push(openSecret(key, endpoint.id, endpoint.previousSecret));
  return secrets;
}
