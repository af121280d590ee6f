import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** An opaque id: the prefix and 24 random letters and digits (about 143 bits), never a serial number. */
export function newOpaqueId(prefix: 'wh' | 'msg'): string {
  let id = `${prefix}_`;
  for (let i = 0; i < 24; i++) id += ALPHABET[randomInt(ALPHABET.length)];
  return id;
}
