import { beforeAll, describe, expect, it } from 'vitest';
import { displayPrefixOf, generateApiKey, hashApiKey, parseExpiry } from '../db/keys';
import {
  createBrand,
  createPartner,
  findPartnerByName,
  insertApiKey,
  listApiKeys,
  listPartners,
  revokeApiKey,
  setApiKeyExpiry,
  setPartnerActive,
} from '../db/queries/apiKeys';
import { NOW, openTestDatabase } from './support/database';
import { expectPartnerError } from './support/errors';
import { callerFor, testServices } from './support/services';

// D-4: keys are issued as pk_live_ + 32 base62 characters, stored hashed, and can be revoked or expire.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let services: ReturnType<typeof testServices>;
// The key cache's clock: a change to a key is seen by every call once it is 1 s old.
let cacheClock = 0;
const afterTheCacheBound = () => {
  cacheClock += 1_001;
};
beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db, {}, undefined, { clock: () => cacheClock });
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
    afterTheCacheBound();
    await expectPartnerError(api.brands.list({}), 'PARTNER_API_KEY_EXPIRED');
    await setApiKeyExpiry(database.db, row.id, null);
    afterTheCacheBound();
    expect((await api.brands.list({})).status).toBe('SUCCESS');

    expect(await revokeApiKey(database.db, row.id, new Date(NOW.getTime() - 1000))).toBe(true);
    afterTheCacheBound();
    await expectPartnerError(api.brands.list({}), 'PARTNER_API_KEY_INACTIVE');
    expect(await revokeApiKey(database.db, 999_999, NOW)).toBe(false);
  });
});

describe('expiries as the keys CLI reads them (KST, D-5)', () => {
  it('take a day as valid through the end of that KST day: the key expires at the next 00:00 KST', () => {
    expect(parseExpiry('2027-06-30').toISOString()).toBe('2027-06-30T15:00:00.000Z');
    expect(parseExpiry('2027-12-31').toISOString()).toBe('2027-12-31T15:00:00.000Z');
  });

  it('read a time without an offset as KST, and one with an offset as written', () => {
    expect(parseExpiry('2027-06-30T12:00').toISOString()).toBe('2027-06-30T03:00:00.000Z');
    expect(parseExpiry('2027-06-30T12:00:30').toISOString()).toBe('2027-06-30T03:00:30.000Z');
    expect(parseExpiry('2027-06-30T03:00Z').toISOString()).toBe('2027-06-30T03:00:00.000Z');
    expect(parseExpiry('2027-06-30T12:00+09:00').toISOString()).toBe('2027-06-30T03:00:00.000Z');
  });

  it.each([
    '2027-02-30',
    '2027-13-01',
    '2027-6-30',
    '2027-06-30T24:00',
    '2027-06-30T12:60',
    '30/06/2027',
    'tomorrow',
    '',
  ])('refuse %j rather than roll it over', (text) => {
    expect(() => parseExpiry(text)).toThrow();
  });
});

describe('a fresh database made usable without SQL (partners and brands CLIs)', () => {
  it('creates a partner and a brand whose new key reads that brand; a deactivated partner shows in the key list', async () => {
    const partner = await createPartner(database.db, 'Fresh Partner');
    if (!partner) throw new Error('partner not created');
    await createBrand(database.db, { partnerId: partner.id, brandCode: 'fresh-brand', displayName: 'Fresh Brand' });
    const key = generateApiKey();
    await insertApiKey(database.db, {
      partnerId: partner.id,
      keyHash: hashApiKey(key),
      displayPrefix: displayPrefixOf(key),
    });
    afterTheCacheBound();
    const api = callerFor(services, key);
    expect((await api.brands.list({})).data.items.map((brand) => brand.brand_code)).toEqual(['fresh-brand']);
    expect((await listPartners(database.db)).find((row) => row.name === 'Fresh Partner')).toMatchObject({
      active: true,
      brands: 1,
      keys: 1,
    });

    expect(await setPartnerActive(database.db, 'Fresh Partner', false)).toBe(true);
    afterTheCacheBound();
    await expectPartnerError(api.brands.list({}), 'PARTNER_API_FORBIDDEN');
    const listed = (await listApiKeys(database.db)).filter((row) => row.partner === 'Fresh Partner');
    expect(listed.map((row) => row.partnerActive)).toEqual([false]);
    expect(await setPartnerActive(database.db, 'No Such Partner', true)).toBe(false);
  });
});

describe('a partner, brand or key that already exists', () => {
  it('is not created again: the functions answer undefined, which the CLIs say in one line', async () => {
    const partner = await findPartnerByName(database.db, 'Demo Foods');
    if (!partner) throw new Error('Demo Foods missing');
    expect(await createPartner(database.db, 'Demo Foods')).toBeUndefined();
    expect(
      await createBrand(database.db, { partnerId: partner.id, brandCode: 'chicken-house', displayName: 'Again' }),
    ).toBeUndefined();
    const key = generateApiKey();
    const row = { partnerId: partner.id, keyHash: hashApiKey(key), displayPrefix: displayPrefixOf(key) };
    expect(await insertApiKey(database.db, row)).toBeDefined();
    expect(await insertApiKey(database.db, row)).toBeUndefined();
  });
});
