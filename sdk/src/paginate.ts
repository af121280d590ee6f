import { PartnerApiError } from './errors.js';
import type { AbortSignalLike, RequestOptions, WithResponse } from './request.js';

/** The `data` of every list: one page of items and whether another follows. */
export type Page<Item> = { items: Item[]; page: number; limit: number; has_next: boolean };

/** A list call of the client, e.g. `client.reviews.list`. */
export type ListCall = (input: never, options?: RequestOptions) => Promise<Page<unknown>>;

/** The item type of a list call. */
export type ItemOf<List extends ListCall> = Awaited<ReturnType<List>>['items'][number];

/** The parameters of a list call. */
export type ParamsOf<List extends ListCall> = Parameters<List>[0];

/** How `paginate` walks. */
export type PaginateOptions = Omit<RequestOptions, 'signal'> & {
  /** Aborts the walk: the pending call rejects with `name === 'AbortError'`, and no further call is made. */
  signal?: AbortSignalLike | undefined;
  /**
   * Called when every item of a page has been taken from the iterator, with that page's answer. Its
   * `nextCursor` is where to resume (`paginate(list, { ...filters, cursor })`) without repeating or skipping
   * an item already handled; undefined on the last page and for lists without cursors. A walk that stops
   * inside a page, or before this has saved, resumes from the previous cursor and replays that page.
   */
  onPage?: ((page: WithResponse<Page<unknown>>) => void | Promise<void>) | undefined;
};

type Arguments<List extends ListCall> =
  undefined extends ParamsOf<List>
    ? [params?: ParamsOf<List>, options?: PaginateOptions]
    : [params: ParamsOf<List>, options?: PaginateOptions];

/**
 * Every item of a list, across all its pages, in the list's order:
 * `for await (const review of paginate(client.reviews.list, { brand_code, rating_min: 4 })) …`.
 *
 * The review list is followed by its cursor (D-19: the `Link` rel="next" header's `cursor`), so no review is
 * skipped or repeated when new ones arrive while you read; a `cursor` among the parameters starts the walk
 * there (a saved `nextCursor`). Every other list (and the review list of a server without cursors) is read
 * page by page while `has_next`. `limit` sets the page size (1 to 100, default 20); stop early with
 * `break` or the `signal`. Each page is one call, with the client's retries and the options' timeout.
 */
export async function* paginate<List extends ListCall>(
  list: List,
  ...[params, options = {}]: Arguments<List>
): AsyncGenerator<ItemOf<List>, void, undefined> {
  const { onPage, ...request } = options;
  const call = list as unknown as (
    input: unknown,
    options: RequestOptions,
  ) => Promise<Page<unknown>> & { withResponse?: () => Promise<WithResponse<Page<unknown>>> };
  const first: Record<string, unknown> = { ...(params as object | undefined) };
  let input = first;
  for (;;) {
    const pending = call(input, request);
    const answer = pending.withResponse
      ? await pending.withResponse()
      : { data: await pending, requestId: undefined, rateLimit: undefined, nextCursor: undefined };
    const page = answer.data as Page<ItemOf<List>>;
    yield* page.items;
    await onPage?.(answer);
    if (!page.has_next) return;
    if (answer.nextCursor !== undefined) {
      // A cursor call names no page (D-19: `cursor` with page ≠ 1 is refused).
      const { page: _page, ...filters } = first;
      input = { ...filters, cursor: answer.nextCursor };
    } else if (input.cursor !== undefined) {
      throw new PartnerApiError('A cursor page has a next page but no Link header names it.', {
        code: 'PARTNER_SDK_INVALID_RESPONSE',
        status: 200,
        requestId: answer.requestId,
      });
    } else {
      input = { ...input, page: page.page + 1 };
    }
  }
}
