/**
 * Hashes of keys this instance has recently seen pass the key check. Only consulted to let such a key
 * past the per-address guard of refused calls (D-14), so a flood of bad keys from a shared address (a
 * proxy, a NAT) cannot lock out working partners; the key is still checked against the database on every
 * call, so this state never changes an answer. Bounded: oldest entries go first.
 */
export class RecentlyValidKeys {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly ttlMs = 10 * 60_000,
    private readonly capacity = 10_000,
    private readonly clock: () => number = Date.now,
  ) {}

  has(keyHash: string): boolean {
    const until = this.seen.get(keyHash);
    return until !== undefined && until > this.clock();
  }

  delete(keyHash: string) {
    this.seen.delete(keyHash);
  }

  add(keyHash: string) {
    this.seen.delete(keyHash); // re-insert so Map order stays oldest-first
    this.seen.set(keyHash, this.clock() + this.ttlMs);
    if (this.seen.size > this.capacity) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
  }
}
