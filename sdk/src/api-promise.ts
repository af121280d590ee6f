import type { APIPromise, WithResponse } from './request.js';

/** A call's promise of `data`, whose `withResponse()` gives the same answer whole. */
export function apiPromise<Data>(result: Promise<WithResponse<Data>>): APIPromise<Data> {
  const data = result.then((answer) => answer.data) as APIPromise<Data>;
  data.withResponse = () => {
    // Whoever asks for the whole answer handles its failure there; the `data` promise must not then be
    // reported as an unhandled rejection.
    data.catch(() => undefined);
    return result;
  };
  return data;
}
