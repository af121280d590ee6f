// The public types of one call: its options, the promise it returns and the metadata of its answer.
// They name no DOM or Node type, so a project compiles them with neither `lib: ["DOM"]` nor `@types/node`.

/** The part of an `AbortSignal` the client uses; any WHATWG `AbortSignal` fits. */
export type AbortSignalLike = {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
};

/**
 * The runtime's own `AbortSignal` type where the project has one (DOM or `@types/node`), else
 * `AbortSignalLike`: what a custom `fetch` receives, so it can pass the signal on to any real fetch.
 */
export type RuntimeAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer Signal } }
  ? Signal
  : AbortSignalLike;

/** The last argument of every method. */
export type RequestOptions = {
  /** Aborts the call at once, during a request or a retry wait; it rejects with `name === 'AbortError'`. */
  signal?: AbortSignalLike | undefined;
  /** The longest one attempt may take, in ms; overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
  /**
   * Sent as `x-request-id` and echoed by the server when it matches `[A-Za-z0-9._:-]{1,128}` (otherwise the
   * server names the request itself): ties your logs to the API's. Every retry of the call sends the same.
   */
  requestId?: string | undefined;
  /**
   * Parameters this version of the SDK does not know, sent as given: a filter added to the API within v1
   * is usable before you upgrade. The parameters object refuses names it does not know (a `TypeError`).
   */
  extraParams?: Record<string, string | number | boolean> | undefined;
};

/** The `RateLimit-*` headers of an answer (partner guide § Rate limit). */
export type RateLimit = {
  /** Calls allowed per sliding minute for the key. */
  limit: number;
  /** Calls left in the current window, after this one. */
  remaining: number;
  /** Seconds until the window frees a call. */
  resetSeconds: number;
};

/** A call's `data` with what its answer said besides. */
export type WithResponse<Data> = {
  data: Data;
  /** The answer's `x-request-id`: the one you sent, or the server's. Quote it when asking about a call. */
  requestId: string | undefined;
  /** The key's rate limit after this call; undefined when the answer carried none. */
  rateLimit: RateLimit | undefined;
  /**
   * The cursor of the next page (the review list's `Link` rel="next"), or undefined on the last page and
   * for lists without cursors. Save it to resume later: pass it back as `cursor` with the same filters.
   */
  nextCursor: string | undefined;
};

/** What every method returns: a promise of the call's `data`, which can also give the whole answer. */
export interface APIPromise<Data> extends Promise<Data> {
  /** The same call's `data` with its request id, rate limit and next cursor. */
  withResponse(): Promise<WithResponse<Data>>;
}

/** A report page whose rows are those of one `group_by`. */
export type NarrowedPage<Page extends { items: unknown[] }, GroupBy> = Omit<Page, 'items'> & {
  items: Extract<Page['items'][number], { group_by: GroupBy }>[];
};

/** The `data` of a feed's page: its items, whether more follow now, and the position after them. */
export type FeedPage = { items: unknown[]; has_next: boolean; next_cursor: string };

/**
 * What a feed's call returns (`client.reviews.changes(…)`): `for await` gives its items from `cursor` on,
 * page after page, and ends at the first page with `has_next` false; walk it again later (this object, or
 * a new call given the saved `cursor`) to read what changed since. One walk or page at a time.
 */
export interface ChangeFeed<Page extends FeedPage> extends AsyncIterable<Page['items'][number]> {
  /**
   * Where to resume without skipping an item: the `next_cursor` of the last page whose items have all been
   * handled (the loop asked for the item after the page's last), or read through `nextPage`; the `cursor`
   * given until then. Save it after a walk, or at any moment during one: a walk that stopped inside a page
   * resumes at that page's start and hands its earlier items out again.
   */
  readonly cursor: string | undefined;
  /** One page from `cursor`; once it resolves, `cursor` is that page's `next_cursor`. */
  nextPage(): APIPromise<Page>;
}
