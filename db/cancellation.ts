import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The abort signal of the work in progress (a request), carried implicitly to every query it makes, so a
 * request whose client has gone or whose deadline has passed stops its queries (D-20) without every query
 * function taking a signal parameter. The two drivers honour it in db/postgres-statements.ts and
 * db/pglite-turns.ts.
 */
const current = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `work` with `signal` governing every query it makes. Awaited inside the scope: drizzle's queries
 * are lazy thenables that start only when awaited, which must happen where the signal is known.
 */
export function withQuerySignal<T>(signal: AbortSignal, work: () => PromiseLike<T>): Promise<T> {
  return current.run(signal, async () => await work());
}

/**
 * Runs `work` under `signal` (as withQuerySignal) and stops waiting for it the moment the signal aborts,
 * rejecting with a QueryAbortedError, whatever a stalled store still holds (D-20). The request path and
 * /readyz share it.
 */
export function untilAborted<T>(signal: AbortSignal, work: () => PromiseLike<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new QueryAbortedError(signal.reason));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    withQuerySignal(signal, work)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Runs shared work (a cache reload many requests wait for) outside any one request's signal. */
export function withoutQuerySignal<T>(work: () => T): T {
  return current.exit(work);
}

/** The signal of the work in progress, if any. */
export function querySignal(): AbortSignal | undefined {
  return current.getStore();
}

/** The error a query refused or cancelled by its signal rejects with. */
export class QueryAbortedError extends Error {
  override name = 'QueryAbortedError';
  constructor(reason: unknown) {
    super('query aborted', { cause: reason });
  }
}
