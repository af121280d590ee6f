import { hash, randomInt } from 'node:crypto';
import { addDays, isCalendarDay, kstDayStart } from './kst';

// D-4: keys are stored as SHA-256 (hex) plus a short display prefix; the plain key is shown once at issue.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** How a key is stored, and how the key check looks a presented one up (D-4). */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What lists and logs may show of a key: enough to tell keys apart, useless to call with. */
export function displayPrefixOf(key: string): string {
  return `${key.slice(0, 16)}…`;
}

/** What a key can be (generateApiKey, the demo keys); anything else is refused without a lookup (D-4, D-13). */
export const API_KEY_FORMAT = /^[A-Za-z0-9_]+$/;

/** `pk_live_` + 32 random base62 characters (D-4), from the CSPRNG. */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(BASE62.length)];
  return `pk_live_${body}`;
}

/** An expiry in KST (D-5): a day (the key works through its end) or a time, KST unless it carries an offset. */
export function parseExpiry(text: string): Date {
  const match = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})?)?$/.exec(text);
  const [, day, hours, minutes, seconds = '00', offset = '+09:00'] = match ?? [];
  if (!day || !isCalendarDay(day))
    throw new Error(`not a day (YYYY-MM-DD) or a time (YYYY-MM-DDTHH:MM[:SS][offset]): ${text}`);
  if (hours === undefined) return kstDayStart(addDays(day, 1));
  if (
    Number(hours) > 23 ||
    Number(minutes) > 59 ||
    Number(seconds) > 59 ||
    !/^(Z|[+-](0\d|1[0-4]):[0-5]\d)$/.test(offset)
  ) {
    throw new Error(`not a time: ${text}`);
  }
  return new Date(`${day}T${hours}:${minutes}:${seconds}${offset}`);
}
