import type { PGlite } from '@electric-sql/pglite';
import { QueryAbortedError, querySignal } from './cancellation';

/**
 * PGlite with the query signal: it runs one statement at a time in this thread, so a statement cannot be
 * interrupted, but one whose request has gone while it waited its turn is dropped instead of run. Without
 * this, abandoned requests queue work ahead of live ones, and a crowd of clients that left delays the next
 * live call by seconds. The turn is taken here, in call order, as PGlite itself would.
 */
export function cancellablePglite(client: PGlite): PGlite {
  let turn: Promise<unknown> = Promise.resolve();
  const query = client.query.bind(client) as PGlite['query'];
  const cancellable = ((...args: Parameters<PGlite['query']>) => {
    const signal = querySignal();
    const queued = turn.then(() => {
      if (signal?.aborted) throw new QueryAbortedError(signal.reason);
      return query(...args);
    });
    turn = queued.catch(() => undefined);
    if (!signal) return queued;
    // The caller is answered at once when its signal aborts, while its turn is skipped later.
    return new Promise<Awaited<typeof queued>>((resolve, reject) => {
      const abort = () => reject(new QueryAbortedError(signal.reason));
      if (signal.aborted) abort();
      signal.addEventListener('abort', abort, { once: true });
      queued.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    });
  }) as PGlite['query'];
  // PGlite keeps its state in #private fields: its methods must run on the instance, not on the proxy.
  return new Proxy(client, {
    get: (target, key) => {
      if (key === 'query') return cancellable;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
