// A partner's code against the installed package only: no server sources, no zod, no Node or DOM types
// (tsconfig: lib ES2022, types [], skipLibCheck false). test/sdk/consumer.test.ts compiles it and calls
// these functions against a live server.
import {
  type AbortSignalLike,
  CursorExpiredError,
  createPartnerClient,
  PartnerApiError,
  type PartnerClient,
  type PartnerClientOptions,
  type PartnerErrorCode,
  paginate,
  type Review,
  type ReviewChange,
  type ReviewStatsRow,
  type SalesRow,
  type SdkErrorCode,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '@partner-reporting/sdk';

/** A filter: the brand's reviews of 4 stars and more. */
export async function reviewsRatedAtLeast(options: PartnerClientOptions, brand_code: string, rating_min: number) {
  const client = createPartnerClient(options);
  const page = await client.reviews.list({ brand_code, rating_min, limit: 100 });
  return page.items.map((review) => ({ review_id: review.review_id, rating: review.rating }));
}

/** An error: what a failed call rejects with. */
export async function failureOf(options: PartnerClientOptions, brand_code: string) {
  const client = createPartnerClient(options);
  try {
    await client.shops.list({ brand_code });
    return undefined;
  } catch (error) {
    if (!(error instanceof PartnerApiError)) throw error;
    const code: PartnerErrorCode | SdkErrorCode = error.code;
    return {
      code,
      status: error.status,
      requestId: error.requestId,
      retryAfter: error.retryAfter,
      message: String(error),
    };
  }
}

/** Any list call, answered or failed, for the rate-limit scenario. */
export async function brandCodes(options: PartnerClientOptions) {
  const { items } = await createPartnerClient(options).brands.list();
  return items.map((brand) => brand.brand_code);
}

/** Every review of a brand, `limit` a page, through the async iterator. */
export async function everyReview(options: PartnerClientOptions, brand_code: string, limit: number) {
  const reviews: Review[] = [];
  for await (const review of paginate(createPartnerClient(options).reviews.list, { brand_code, limit })) {
    reviews.push(review);
  }
  return reviews.map((review) => review.review_id);
}

/** Every shop of a brand, `limit` a page (a list without cursors). */
export async function everyShop(options: PartnerClientOptions, brand_code: string, limit: number) {
  const ids: string[] = [];
  for await (const shop of paginate(createPartnerClient(options).shops.list, { brand_code, limit })) {
    ids.push(`${shop.platform}:${shop.platform_shop_id}`);
  }
  return ids;
}

/** A call given a signal and a timeout: what it rejected with (name and code), or 'answered'. */
export async function brandsUntil(options: PartnerClientOptions, signal?: AbortSignalLike, timeoutMs?: number) {
  try {
    await createPartnerClient(options).brands.list({}, { signal, timeoutMs });
    return 'answered';
  } catch (error) {
    if (!(error instanceof PartnerApiError)) throw error;
    return { name: error.name, code: error.code };
  }
}

/** One page with what its answer said besides: the checkpoint of a long export. */
export async function reviewPage(
  options: PartnerClientOptions,
  brand_code: string,
  limit: number,
  cursor?: string,
  requestId?: string,
) {
  const client = createPartnerClient(options);
  const {
    data,
    nextCursor,
    rateLimit,
    requestId: answered,
  } = await client.reviews
    .list({ brand_code, limit, ...(cursor === undefined ? {} : { cursor }) }, { requestId })
    .withResponse();
  return { ids: data.items.map((review) => review.review_id), nextCursor, rateLimit, requestId: answered };
}

/** Every review from a saved cursor on (a resumed export), with the cursor saved after each page. */
export async function reviewsFrom(options: PartnerClientOptions, brand_code: string, limit: number, cursor: string) {
  const ids: string[] = [];
  const checkpoints: (string | undefined)[] = [];
  const client = createPartnerClient(options);
  const pages = paginate(
    client.reviews.list,
    { brand_code, limit, cursor },
    { onPage: (page) => void checkpoints.push(page.nextCursor) },
  );
  for await (const review of pages) ids.push(review.review_id);
  return { ids, checkpoints };
}

/**
 * The review change feed from `cursor` (a full walk without one), `limit` a page: the changes handed out
 * and the cursor to resume from. With `stopAfter`, the walk stops after that many changes, as a crash would.
 */
export async function reviewChanges(
  options: PartnerClientOptions,
  brand_code: string,
  limit: number,
  cursor?: string,
  stopAfter?: number,
) {
  const feed = createPartnerClient(options).reviews.changes({ brand_code, limit, cursor });
  const changes: ReviewChange[] = [];
  for await (const change of feed) {
    changes.push(change);
    if (changes.length === stopAfter) break;
  }
  return { changes, cursor: feed.cursor };
}

/**
 * The same read made twice, then an idle feed polled twice, through one client with the conditional cache:
 * each attempt's status, whether the answers were equal, and the rate limit each answer reported.
 */
export async function cachedReads(options: PartnerClientOptions, brand_code: string, cursor: string) {
  const statuses: number[] = [];
  const client = createPartnerClient({
    ...options,
    cache: true,
    onResponse: ({ status }) => void statuses.push(status),
  });
  const first = await client.reviews.list({ brand_code, limit: 5 }).withResponse();
  const second = await client.reviews.list({ brand_code, limit: 5 }).withResponse();
  const polls: (string | undefined)[] = [];
  const feed = client.reviews.changes({ brand_code, cursor });
  for (let poll = 0; poll < 2; poll++) {
    for await (const change of feed) polls.push(change.review_id);
  }
  return {
    statuses,
    same: JSON.stringify(second.data) === JSON.stringify(first.data),
    remaining: [first.rateLimit?.remaining, second.rateLimit?.remaining],
    polls,
    cursor: feed.cursor,
  };
}

/** A feed from a cursor the API no longer serves: what the walk rejected with, if it did. */
export async function expiredFeed(options: PartnerClientOptions, brand_code: string, cursor: string) {
  try {
    for await (const change of createPartnerClient(options).reviews.changes({ brand_code, cursor })) void change;
    return undefined;
  } catch (error) {
    if (!(error instanceof CursorExpiredError)) throw error;
    const code: 'PARTNER_API_CURSOR_EXPIRED' = error.code;
    return { name: error.name, code, status: error.status, isPartnerApiError: error instanceof PartnerApiError };
  }
}

/** Week rows: the call's answer is narrowed by its group_by argument. */
export async function weekStarts(options: PartnerClientOptions, brand_code: string) {
  const { items } = await createPartnerClient(options).sales.list({ brand_code, group_by: 'week', limit: 100 });
  return items.map((row) => {
    const week: string = row.week_start;
    // @ts-expect-error a week row's date is null, not a string
    const day: string = row.date;
    void day;
    return week;
  });
}

/** Any report row narrows by checking its group_by. */
export function describeRow(row: SalesRow | ReviewStatsRow): string {
  if (row.group_by === 'week') return `week of ${row.week_start}`;
  if (row.group_by === 'date') return `day ${row.date}`;
  if (row.group_by === 'shop') return `${row.platform}:${row.platform_shop_id} ${row.shop_name}`;
  if (row.group_by === 'platform') return row.platform;
  return row.user?.display_name ?? 'shops without a user';
}

/**
 * Mistakes that must not compile. Never called: each `@ts-expect-error` fails the build when the line
 * under it compiles, so the types cannot quietly widen (to `any`, or to strings for every filter).
 */
export async function mistakes(client: PartnerClient) {
  // @ts-expect-error a filter the API does not have
  await client.reviews.list({ brand_code: 'chicken-house', rating_minimum: 4 });
  // @ts-expect-error rating_min is a number
  await client.reviews.list({ brand_code: 'chicken-house', rating_min: '4' });
  // @ts-expect-error replied is a boolean
  await client.reviews.list({ brand_code: 'chicken-house', replied: 'yes' });
  // @ts-expect-error platform is one of the platforms
  await client.reviews.list({ brand_code: 'chicken-house', platform: 'UBER_EATS' });
  // @ts-expect-error sales cover BAEMIN, CPEATS and YOGIYO only
  await client.sales.list({ brand_code: 'chicken-house', platform: 'NAVER' });
  // @ts-expect-error brand_code is required
  await client.shops.list({ limit: 10 });
  // @ts-expect-error review_id is required
  await client.reviews.get({ brand_code: 'chicken-house' });
  // @ts-expect-error there is no such call
  await client.reviews.delete({ brand_code: 'chicken-house', review_id: 'R1' });

  const review = await client.reviews.get({ brand_code: 'chicken-house', review_id: 'R000000001' });
  // @ts-expect-error rating may be null (a review without stars)
  const stars: number = review.rating;
  // @ts-expect-error the answer is `data`, not the envelope
  const status: string = (await client.brands.list()).status;

  for await (const item of paginate(client.reviews.list, { brand_code: 'chicken-house' })) {
    const id: string = item.review_id;
    // @ts-expect-error items are reviews
    const name: string = item.display_name;
    void [id, name];
  }
  // @ts-expect-error paginate checks the filters too
  paginate(client.reviews.list, { brand_code: 'chicken-house', handled: 1 });
  // @ts-expect-error paginate needs a list
  paginate(client.users.get, { brand_code: 'chicken-house', user_code: 'u-ch-001' });
  // @ts-expect-error a feed is walked by itself, not by paginate
  paginate(client.reviews.changes, { brand_code: 'chicken-house' });
  // @ts-expect-error a feed has no pages by number
  client.reviews.changes({ brand_code: 'chicken-house', page: 2 });

  const feed = client.reviews.changes({ brand_code: 'chicken-house' });
  for await (const change of feed) {
    const kind: 'UPSERT' | 'DELETE' = change.change;
    // @ts-expect-error a DELETE carries no review: review may be null
    const rating: number | null = change.review.rating;
    void [kind, rating];
  }
  // @ts-expect-error the cursor is the feed's to move
  feed.cursor = 'elsewhere';
  const { has_next, next_cursor }: { has_next: boolean; next_cursor: string } = await feed.nextPage();
  void [has_next, next_cursor];

  const weeks = await client.sales.list({ brand_code: 'chicken-house', group_by: 'week' });
  for (const row of weeks.items) {
    // @ts-expect-error a week row has no day: its date is null
    const day: string = row.date;
    void day;
  }
  const stats = await client.reviewStats.list({ brand_code: 'chicken-house' });
  for (const row of stats.items) {
    // @ts-expect-error rows of the default group_by (date) have no shop
    const shop: string = row.shop_name;
    void shop;
  }
  // @ts-expect-error group_by of review statistics is date, shop or platform
  await client.reviewStats.list({ brand_code: 'chicken-house', group_by: 'week' });
  // @ts-expect-error an unknown parameter among the options' neighbours is still refused
  await client.reviews.list({ brand_code: 'chicken-house', rating_minimum: 4 }, { timeoutMs: 1000 });
  await client.reviews.list({ brand_code: 'chicken-house' }, { extraParams: { rating_minimum: 4 } });

  const error = new PartnerApiError('x', { code: 'PARTNER_API_RATE_LIMITED', status: 429 });
  // @ts-expect-error codes are the API's catalogue
  if (error.code === 'PARTNER_API_TOO_MANY') return;
  void [stars, status];
}

/** A webhook delivery as a receiver got it: the event's type and data when it verifies, else the error's name. */
export function verifiedEvent(
  secret: string,
  body: string,
  headers: Record<string, string>,
): { type: WebhookEvent['type']; data: WebhookEvent['data'] } | { error: string; isVerificationError: boolean } {
  try {
    const event = verifyWebhook(secret, body, headers);
    return { type: event.type, data: event.data };
  } catch (error) {
    return { error: (error as Error).name, isVerificationError: error instanceof WebhookVerificationError };
  }
}
