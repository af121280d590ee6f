import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { z } from 'zod';
import type { FeedPosition } from '../../db/queries/review-changes';
import { PUBLIC_CODE } from '../../db/schema/columns';
import { decodePayload, FIRST_SECOND, fingerprintOf, LAST_SECOND } from './cursor';

// The feed's cursor (D-26): its position sealed with AES-256-GCM under the database's cursor key, with the
// brand and the key's partner as associated data. A cursor the service did not issue for this brand and
// partner does not open (400), and nothing in it can be read. The nonce is derived from the content (a
// synthetic IV), so one position has one spelling: a quiet brand's first page, and its ETag, stay the same.

/** What a feed cursor is bound to. */
export type FeedCursorScope = { brandCode: string; partnerId: number };

/** The characters of base64url without padding, as long as the longest sealed position. */
export const FEED_CURSOR_TEXT = /^[A-Za-z0-9_-]{1,300}$/;

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const counter = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const history = z.string().max(16);
const positionSchema = z.union([
  z.tuple([
    z.literal('w'),
    history,
    counter,
    counter,
    counter,
    z.number().int().min(FIRST_SECOND).max(LAST_SECOND).nullable(),
    z.string().regex(PUBLIC_CODE).nullable(),
  ]),
  z.tuple([z.literal('c'), history, counter, counter, counter]),
]);

/** Cursors issued before they were sealed: base64url JSON ending in a fingerprint of the brand and partner. */
const unsealedSchema = z.union([
  z.tuple([z.literal('w'), counter, counter, counter, z.number().nullable(), z.string().nullable(), z.string()]),
  z.tuple([z.literal('c'), counter, counter, counter, z.string()]),
]);

type Keys = { seal: Buffer; nonce: Buffer };
const derived = new WeakMap<Buffer, Keys>();

/** Two keys from the database's one: one encrypts, one derives each cursor's nonce. */
function keysOf(key: Buffer): Keys {
  let keys = derived.get(key);
  if (!keys) {
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, 32));
    keys = { seal: derive('feed cursor seal'), nonce: derive('feed cursor nonce') };
    derived.set(key, keys);
  }
  return keys;
}

const boundTo = (scope: FeedCursorScope) => Buffer.from(JSON.stringify([scope.brandCode, scope.partnerId]));

export function sealFeedCursor(key: Buffer, position: FeedPosition, scope: FeedCursorScope): string {
  const { history: made, epoch } = position;
  const payload =
    position.kind === 'changes'
      ? ['c', made, epoch, position.xid, position.seq]
      : [
          'w',
          made,
          epoch,
          position.start.xid,
          position.start.seq,
          position.after ? Math.floor(position.after.writtenAt.getTime() / 1000) : null,
          position.after?.reviewCode ?? null,
        ];
  const plain = Buffer.from(JSON.stringify(payload));
  const associated = boundTo(scope);
  const keys = keysOf(key);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(associated.length);
  const nonce = createHmac('sha256', keys.nonce)
    .update(length)
    .update(associated)
    .update(plain)
    .digest()
    .subarray(0, NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.seal, nonce).setAAD(associated);
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([nonce, sealed, cipher.getAuthTag()]).toString('base64url');
}

/**
 * The position a cursor holds if the service issued it for this brand and partner; 'expired' for one
 * issued before cursors were sealed (it is answered 410 once, then the walk starts again).
 */
export function openFeedCursor(
  key: Buffer,
  cursor: string,
  scope: FeedCursorScope,
): FeedPosition | 'expired' | undefined {
  if (!FEED_CURSOR_TEXT.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder skips what it cannot read; only the canonical spelling of the bytes is ours.
  if (bytes.toString('base64url') !== cursor) return undefined;
  const payload = opened(keysOf(key), bytes, boundTo(scope));
  if (!payload) {
    const unsealed = decodePayload(cursor, unsealedSchema);
    return unsealed && unsealed.at(-1) === fingerprintOf([scope.brandCode, scope.partnerId]) ? 'expired' : undefined;
  }
  if (payload[0] === 'c') {
    const [, made, epoch, xid, seq] = payload;
    return { kind: 'changes', history: made, epoch, xid, seq };
  }
  const [, made, epoch, xid, seq, seconds, reviewCode] = payload;
  if ((seconds === null) !== (reviewCode === null)) return undefined;
  const after =
    seconds === null || reviewCode === null ? undefined : { writtenAt: new Date(seconds * 1000), reviewCode };
  return { kind: 'walk', history: made, epoch, start: { xid, seq }, after };
}

function opened(keys: Keys, bytes: Buffer, associated: Buffer) {
  if (bytes.length <= NONCE_BYTES + TAG_BYTES) return undefined;
  const nonce = bytes.subarray(0, NONCE_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', keys.seal, nonce).setAAD(associated).setAuthTag(tag);
    const plain = Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, -TAG_BYTES)), decipher.final()]);
    return positionSchema.parse(JSON.parse(plain.toString('utf8')));
  } catch {
    return undefined;
  }
}
