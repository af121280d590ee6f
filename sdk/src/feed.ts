import { apiPromise } from './api-promise.js';
import type { APIPromise, ChangeFeed, FeedPage } from './request.js';

/**
 * A feed over pages chained by their `next_cursor`, starting at `start` (from the beginning when
 * undefined). The position moves past a page only when the item after its last is asked for, i.e. once the
 * caller has handled them all, so resuming from `cursor` may repeat items but never skips one; the feed's
 * contract allows repeats.
 */
export function changeFeed<Page extends FeedPage>(
  fetchPage: (cursor: string | undefined) => APIPromise<Page>,
  start: string | undefined,
): ChangeFeed<Page> {
  let cursor = start;
  return {
    get cursor() {
      return cursor;
    },
    nextPage() {
      return apiPromise(
        fetchPage(cursor)
          .withResponse()
          .then((answer) => {
            cursor = answer.data.next_cursor;
            return answer;
          }),
      );
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const page = await fetchPage(cursor);
        yield* page.items as Page['items'][number][];
        cursor = page.next_cursor;
        if (!page.has_next) return;
      }
    },
  };
}
