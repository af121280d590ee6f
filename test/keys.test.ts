import { beforeAll, describe, expect, it } from 'vitest';
import { displayPrefixOf, generateApiKey, hashApiKey } from '../db/keys';
import { findPartnerByName, insertApiKey, revokeApiKey, setApiKeyExpiry } from '../db/queries/apiKeys';
import { NOW, openTestDatabase } from './support/database';
import { expectPartnerError } from './support/errors';
import { callerFor, testServices } from './support/services';

// D-4: keys are issued as pk_live_ + 32 base62 characters, stored hashed, and can be revoked or expire.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let services: ReturnType<typeof testServices>;
// The key directory's clock: a change to a key is seen by every call once it is 1 s old.
let directoryClock = 0;
const afterTheDirectoryBound = () => {
  directoryClock += 1_001;
};
beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db, {}, undefined, { minIntervalMs: 0, clock: () => directoryClock });
});

describe('API keys (D-4)', () => {
  it('are generated in the documented format, never twice the same', () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) expect(key).toMatch(/^pk_live_[0-9A-Za-z]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
    expect(displayPrefixOf('pk_live_abcdefghijklmnop')).toBe('pk_live_abcdefgh…');
  });

  it('work once issued, answer INACTIVE once revoked and EXPIRED once past their expiry', async () => {
    const partner = await findPartnerByName(database.db, 'Other Eats');
    if (!partner) throw new Error('Other Eats missing');
    const key = generateApiKey();
    const row = await insertApiKey(database.db, {
      partnerId: partner.id,
      keyHash: hashApiKey(key),
      displayPrefix: displayPrefixOf(key),
    });
    if (!row) throw new Error('insert failed');
    const api = callerFor(services, key);
    expect((await api.brands.list({})).data.items.map((brand) => brand.brand_code)).toEqual(['burger-town']);

    await setApiKeyExpiry(database.db, row.id, new Date(NOW.getTime() - 1));
    afterTheDirectoryBound();
    await expectPartnerError(api.brands.list({}), 'PARTNER_API_KEY_EXPIRED');
    await setApiKeyExpiry(database.db, row.id, null);
    afterTheDirectoryBound();
    expect((await api.brands.list({})).status).toBe('SUCCESS');

    expect(await revokeApiKey(database.db, row.id, new Date(NOW.getTime() - 1000))).toBe(true);
    afterTheDirectoryBound();
    await expectPartnerError(api.brands.list({}), 'PARTNER_API_KEY_INACTIVE');
    expect(await revokeApiKey(database.db, 999_999, NOW)).toBe(false);
  });
});
