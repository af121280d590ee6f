import { type Db, listenerOf } from '../../../db/client';
import { type ApiKeyState, findApiKeyStates } from '../../../db/queries/apiKeys';
import { type BrandEntry, findBrands, findPartnersBrands } from '../../../db/queries/brands';
import { type ChangeNotice, ChangeNotices, type ChangeNoticesOptions } from './change-notices';
import { RowCache, type RowCacheOptions } from './row-cache';

export type KeyAndBrandCacheOptions = RowCacheOptions &
  ChangeNoticesOptions & {
    /** The backstop: rows unused this long are let go, the others read again (a change no trigger saw). */
    sweepMs?: number;
  };

/**
 * The keys and brands calls ask for, held in memory (D-14, D-21): each row read by itself on first use, dropped
 * when the database notifies its change (db/migrations/0017_key_and_brand_change_notices.sql), and answered from memory only while those
 * notices are confirmed complete up to 1 s back; otherwise every call reads its row. Memory follows the
 * keys and brands in use, not the tables.
 */
export class KeyAndBrandCache {
  private readonly notices: ChangeNotices;
  /** Keys by SHA-256 (D-4), with their partner's state. */
  readonly keys: RowCache<string, ApiKeyState>;
  /** Brands by code. */
  readonly brands: RowCache<string, BrandEntry>;
  /** Each partner's brands in the list order of D-9 (GET /brands). */
  readonly partnerBrands: RowCache<number, BrandEntry[]>;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    /** The database the request pool reads (its LISTEN); rows are read on its control client (D-21). */
    db: Db,
    control: Db,
    private readonly options: KeyAndBrandCacheOptions = {},
  ) {
    this.notices = new ChangeNotices(
      control,
      listenerOf(db),
      (notice) => this.changed(notice),
      () => this.dropAll(),
      options,
    );
    // Listening starts with the first row read (or with start()): a row read before the listen took effect is
    // dropped when it does.
    const listening = <Name, Entry>(find: (names: Name[]) => Promise<ReadonlyMap<Name, Entry>>) => {
      return (names: Name[]) => {
        this.listen();
        return find(names);
      };
    };
    this.keys = new RowCache(
      listening(async (hashes: string[]) => {
        return new Map((await findApiKeyStates(control, hashes)).map((key) => [key.keyHash, key]));
      }),
      this.notices,
      options,
    );
    this.brands = new RowCache(
      listening((codes: string[]) => findBrands(control, codes)),
      this.notices,
      options,
    );
    this.partnerBrands = new RowCache(
      listening((ids: number[]) => findPartnersBrands(control, ids)),
      this.notices,
      options,
    );
  }

  /** Resolves once listening and confirmed: a restart serves from memory from its first call on. */
  start(): Promise<void> {
    this.listen();
    return this.notices.start();
  }

  /** Resolves once every change committed before the call has reached the cache. */
  caughtUp(): Promise<void> {
    this.listen();
    return this.notices.caughtUp();
  }

  /** How far back every change is known to have reached the cache, in ms (partner_api_cache_age_seconds). */
  ageMs(): number {
    return this.notices.ageMs();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.notices.stop();
  }

  private listen() {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      for (const cache of [this.keys, this.brands, this.partnerBrands]) cache.sweep();
    }, this.options.sweepMs ?? 60_000);
    this.sweeper.unref();
    this.notices.start().catch(() => undefined);
  }

  private changed(notice: ChangeNotice) {
    if (notice.all) return this.dropAll();
    if (notice.keys) this.keys.drop(notice.keys);
    if (notice.partners) {
      const partners = new Set(notice.partners);
      this.keys.dropWhere((key) => partners.has(key.partnerId));
    }
    if (notice.brands) this.brands.drop(notice.brands);
    if (notice.brand_partners) this.partnerBrands.drop(notice.brand_partners);
  }

  private dropAll() {
    for (const cache of [this.keys, this.brands, this.partnerBrands]) cache.dropAll();
  }
}
