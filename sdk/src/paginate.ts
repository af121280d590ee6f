import { CALL_RESULT, type CallResult } from './client.js';
import { PartnerApiError } from './errors.js';

/** The `data` of every list: one page of items and whether another follows. */
export type Page<Item> = { items: Item[]; page: number; limit: number; has_next: boolean };

/** A list call of the client, e.g. `client.reviews.list`. */
export type ListCall = (input: never) => Promise<Page<unknown>>;

/** The item type of a list call. */
export type ItemOf<List extends ListCall> = Awaited<ReturnType<List>>['items'][number];

/**
 * Every item of a list, across all its pages, in the list's order:
 * `for await (const review of paginate(client.reviews.list, { brand_code, rating_min: 4 })) …`.
 *
 * The review list is followed by its cursor (D-19: the `Link` rel="next" header's `cursor`), so no review is
 * skipped or repeated when new ones arrive while you read; every other list (and the review list of a
 * server without cursors) page by page while `has_next`. `limit` sets the page size (1 to 100, default 20);
 * stop early with `break`. Each page is one call, with the client's retries.
 */
export async function* paginate<List extends ListCall>(
  list: List,
  ...params: Parameters<List>
): AsyncGenerator<ItemOf<List>, void, undefined> {
  const call = list as unknown as ((input: unknown) => Promise<Page<unknown>>) & {
    [CALL_RESULT]?: (input: unknown) => Promise<CallResult>;
  };
  const first: Record<string, unknown> = { ...(params[0] as object | undefined) };
  let input = first;
  for (;;) {
    const answer = call[CALL_RESULT]
      ? await call[CALL_RESULT](input)
      : { data: await call(input), nextCursor: undefined };
    const page = answer.data as Page<ItemOf<List>>;
    yield* page.items;
    if (!page.has_next) return;
    if (answer.nextCursor !== undefined) {
      // A cursor call names no page (D-19: `cursor` with page ≠ 1 is refused).
      const { page: _page, ...filters } = first;
      input = { ...filters, cursor: answer.nextCursor };
    } else if (input.cursor !== undefined) {
      throw new PartnerApiError('A cursor page has a next page but no Link header names it.', {
        code: 'PARTNER_SDK_INVALID_RESPONSE',
        status: 200,
      });
    } else {
      input = { ...input, page: page.page + 1 };
    }
  }
}
