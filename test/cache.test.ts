import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { displayPrefixOf, generateApiKey, hashApiKey } from '../db/keys';
import { createPartner, insertApiKey, revokeApiKey, setPartnerActive } from '../db/queries/apiKeys';
import { RowCache } from '../server/trpc/cache/row-cache';
import { DRIVER, NOW, openTestDatabase } from './support/database';
import { expectPartnerError } from './support/errors';
import { eventually } from './support/eventually';
import { callerFor, testServices } from './support/services';

// The key and brand cache (server/trpc/cache/): rows read by themselves on first use, one statement at a time,
// bounded so no stuck statement holds the key check of every call (D-20); dropped when the database
// notifies their change, on every instance; answered from memory only while those notices are confirmed
// complete up to 1 s back (D-14).

type Row = { name: string; version: number };

/** A cache over rows the test hands out by hand, with a freshness the test sets. */
function handCache(options: { lookupTimeoutMs?: number } = {}) {
  const clock = { now: 0, confirmedFrom: 0 };
  const lookups: { names: string[]; answer(rows: Row[]): void; fail(error: Error): void }[] = [];
  const cache = new RowCache<string, Row>(
    (names) =>
      new Promise((resolve, reject) =>
        lookups.push({
          names,
          answer: (rows) => resolve(new Map(rows.map((row) => [row.name, row]))),
          fail: reject,
        }),
      ),
    { now: () => clock.now, confirmedFrom: () => clock.confirmedFrom },
    options,
  );
  /** Lets the pending promise callbacks run. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { cache, clock, lookups, settle };
}

describe('row cache', () => {
  it('gives up a lookup that never settles, and the next call looks up afresh', async () => {
    const { cache, lookups } = handCache({ lookupTimeoutMs: 50 });
    await expect(cache.get('a')).rejects.toThrow(/slower than 50 ms/);
    const again = cache.get('a');
    lookups[1]?.answer([{ name: 'a', version: 1 }]);
    expect(await again).toEqual({ name: 'a', version: 1 });
  });

  it('reads the names calls ask for together in one statement, one statement at a time', async () => {
    const { cache, lookups, settle } = handCache();
    const first = cache.get('a');
    const waiting = ['b', 'c', 'b', 'd'].map((name) => cache.get(name));
    await settle();
    expect(lookups.map((lookup) => lookup.names)).toEqual([['a']]);
    lookups[0]?.answer([{ name: 'a', version: 1 }]);
    await first;
    await settle();
    expect(lookups.map((lookup) => lookup.names)).toEqual([['a'], ['b', 'c', 'd']]);
    lookups[1]?.answer([{ name: 'b', version: 1 }]);
    expect((await Promise.all(waiting)).map((row) => row?.name)).toEqual(['b', undefined, 'b', undefined]);
  });

  it('answers from memory while confirmed at most 1 s back, and reads the row for each call past that', async () => {
    const { cache, clock, lookups, settle } = handCache();
    const first = cache.get('a');
    lookups[0]?.answer([{ name: 'a', version: 1 }]);
    await first;
    clock.now = 1_000;
    expect(cache.heldEntry('a')).toEqual({ name: 'a', version: 1 });
    expect(await cache.get('a')).toEqual({ name: 'a', version: 1 });
    expect(lookups).toHaveLength(1);
    clock.now = 1_001; // nothing confirmed since 0: the held row may be stale
    expect(cache.heldEntry('a')).toBeUndefined();
    const read = cache.get('a');
    await settle();
    expect(lookups).toHaveLength(2);
    lookups[1]?.answer([{ name: 'a', version: 2 }]);
    expect(await read).toEqual({ name: 'a', version: 2 });
  });

  it('keeps no row read before its change was notified, though it answers the calls that waited for it', async () => {
    const { cache, lookups, settle } = handCache();
    const read = cache.get('a');
    await settle();
    cache.drop(['a']); // the notice of a change arrives while the statement runs
    lookups[0]?.answer([{ name: 'a', version: 1 }]);
    expect(await read).toEqual({ name: 'a', version: 1 });
    expect(cache.heldEntry('a')).toBeUndefined();
    const again = cache.get('a');
    await settle();
    lookups[1]?.answer([{ name: 'a', version: 2 }]);
    expect(await again).toEqual({ name: 'a', version: 2 });
    expect(cache.heldEntry('a')).toEqual({ name: 'a', version: 2 });
  });

  it('lets go of rows no call asked for since the last sweep, and reads the others again', async () => {
    const { cache, lookups, settle } = handCache();
    const both = Promise.all([cache.get('a'), cache.get('b')]);
    await settle();
    lookups[0]?.answer([{ name: 'a', version: 1 }]);
    await settle();
    lookups[1]?.answer([{ name: 'b', version: 1 }]);
    await both;
    cache.sweep(); // both were asked for: read again
    await settle();
    expect(lookups[2]?.names).toEqual(['a', 'b']);
    lookups[2]?.answer([{ name: 'a', version: 2 }]); // b is gone from the database
    await settle();
    expect(cache.size).toBe(1);
    expect(cache.heldEntry('a')).toEqual({ name: 'a', version: 2 });
    cache.sweep(); // a was asked for once more above: read again; then unused, let go
    await settle();
    lookups[3]?.answer([{ name: 'a', version: 2 }]);
    await settle();
    cache.sweep();
    expect(cache.size).toBe(0);
  });
});

describe(`the key and brand cache on one database, two instances (${DRIVER})`, () => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let second: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase();
    // A second instance has its own connections (PostgreSQL); on PGlite both share the one session.
    second = database.url ? await openDatabase({ url: database.url, maxConnections: 2 }) : database;
  });
  afterAll(async () => {
    if (second !== database) await second.close();
  });

  async function issueKey(partnerName: string) {
    const partner = await createPartner(database.db, partnerName);
    if (!partner) throw new Error('partner not created');
    const key = generateApiKey();
    const row = await insertApiKey(database.db, {
      partnerId: partner.id,
      keyHash: hashApiKey(key),
      displayPrefix: displayPrefixOf(key),
    });
    if (!row) throw new Error('key not issued');
    return { key, id: row.id };
  }

  it('refuses a revoked key and a deactivated partner’s key on every instance once their notices arrived', async () => {
    // The cache's clock stands still: the 1 s bound never passes, so only the notices can tell the instances.
    const instances = [database, second].map((handle) => testServices(handle.db, {}, undefined, { clock: () => 0 }));
    await Promise.all(instances.map((services) => services.cache.start()));
    const revoked = await issueKey('Revoked Partner');
    const deactivated = await issueKey('Deactivated Partner');
    for (const services of instances)
      for (const { key } of [revoked, deactivated])
        expect((await callerFor(services, key).brands.list({})).status).toBe('SUCCESS');

    await revokeApiKey(database.db, revoked.id, new Date(NOW.getTime() - 1));
    await setPartnerActive(database.db, 'Deactivated Partner', false);
    await Promise.all(instances.map((services) => services.cache.caughtUp()));
    for (const services of instances) {
      await expectPartnerError(callerFor(services, revoked.key).brands.list({}), 'PARTNER_API_KEY_INACTIVE');
      await expectPartnerError(callerFor(services, deactivated.key).brands.list({}), 'PARTNER_API_FORBIDDEN');
    }
    await Promise.all(instances.map((services) => services.cache.stop()));
  });

  it('reads a true, small age on an idle instance: how far back it is confirmed, not the time since a call', async () => {
    let clock = 0;
    const services = testServices(database.db, {}, undefined, { clock: () => clock });
    expect(services.cache.ageMs()).toBe(Number.POSITIVE_INFINITY);
    await services.cache.start();
    expect(services.cache.ageMs()).toBe(0);
    clock = 60_000; // a minute without a call: the beats alone bring the age back
    await eventually(
      () => services.cache.ageMs(),
      (age) => age === 0,
    );
    await services.cache.stop();
  });

  it.runIf(DRIVER === 'postgres')(
    'listens again after its connection was cut, and drops what it may have missed',
    async () => {
      const services = testServices(second.db, {}, undefined, { clock: () => 0 });
      await services.cache.start();
      const { key, id } = await issueKey('Cut Partner');
      expect((await callerFor(services, key).brands.list({})).status).toBe('SUCCESS');
      await database.db.execute(
        sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen%'`,
      );
      await revokeApiKey(database.db, id, new Date(NOW.getTime() - 1));
      await services.cache.caughtUp();
      await expectPartnerError(callerFor(services, key).brands.list({}), 'PARTNER_API_KEY_INACTIVE');
      await services.cache.stop();
    },
  );
});
