import { hash, randomInt } from 'node:crypto';

// D-4: keys are stored as SHA-256 (hex) plus a short display prefix; the plain key is shown once at issue.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Once a call: the one-shot digest, without a Hash object to build and drop each time. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What lists and logs may show of a key: enough to tell keys apart, useless to call with. */
export function displayPrefixOf(key: string): string {
  return `${key.slice(0, 16)}…`;
}

/**
 * Whether a presented key could be one of ours: every key has only letters, digits and the underscores of
 * its prefix (generateApiKey, the demo keys). Anything else (a no-break space, say) is a key that does not
 * exist, refused without a lookup (D-4, D-13).
 */
export function isWellFormedApiKey(key: string): boolean {
  return /^[A-Za-z0-9_]+$/.test(key);
}

/** `pk_live_` + 32 random base62 characters (D-4), from the CSPRNG. */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(BASE62.length)];
  return `pk_live_${body}`;
}
