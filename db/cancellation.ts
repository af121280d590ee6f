/**
 * Waits for `work` until `signal` aborts (D-20: a request's deadline, or its client gone; /readyz's 1 s),
 * then rejects with the signal's reason, whatever a stalled store still holds. The work itself is not
 * stopped: a statement runs out under PostgreSQL's statement_timeout.
 */
export function untilAborted<T>(signal: AbortSignal, work: () => PromiseLike<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error('aborted', { cause: signal.reason }));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    Promise.resolve()
      .then(work)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', abort));
  });
}
