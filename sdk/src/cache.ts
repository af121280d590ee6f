// The conditional-request cache: the last ETag and answer of each request, so a repeated call sends
// `If-None-Match` and a 304 (no body, and no unit of the rate limit within the server's budget) is answered
// from memory as if it were the 200 (partner guide § Conditional requests).

/**
 * What the cache keeps of a 200: its ETag, its body as received (a string, so any store can keep it, and
 * each answer from the cache is parsed afresh: changing one never changes the next) and its next cursor.
 */
export type CachedAnswer = { etag: string; body: string; nextCursor: string | undefined };

/**
 * Where answers are kept: the built-in `LruCache`, or your own (one shared by several clients, say). A
 * `Map` fits too, but never forgets anything.
 */
export interface ConditionalCache {
  get(key: string): CachedAnswer | undefined;
  set(key: string, answer: CachedAnswer): void;
}

export const DEFAULT_CACHE_ENTRIES = 500;

/** At most `maxEntries` answers (default 500); the one used least recently goes first. */
export class LruCache implements ConditionalCache {
  readonly #entries = new Map<string, CachedAnswer>();
  readonly #maxEntries: number;

  constructor(maxEntries: number = DEFAULT_CACHE_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new TypeError('LruCache: maxEntries must be ≥ 1');
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): CachedAnswer | undefined {
    const answer = this.#entries.get(key);
    // A Map iterates in insertion order: inserting again makes the entry the most recently used.
    if (answer !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, answer);
    }
    return answer;
  }

  set(key: string, answer: CachedAnswer): void {
    this.#entries.delete(key);
    this.#entries.set(key, answer);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(oldest);
    }
  }
}

/**
 * The entry of one request: its URL (the procedure and every parameter) under a fingerprint of the key, so
 * clients with different keys can share a store without answering from each other's entries, and the key
 * itself never reaches the store.
 */
export function cacheKey(apiKey: string, url: string): string {
  // FNV-1a, 32 bits: a partition, not a secret (the server's ETag covers the key's scope as well).
  let hash = 0x811c9dc5;
  for (let index = 0; index < apiKey.length; index++) {
    hash ^= apiKey.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${hash.toString(16).padStart(8, '0')} ${url}`;
}
