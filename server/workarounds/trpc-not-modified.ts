import type { ServerResponse } from 'node:http';
import type { Conditional } from '../request';

/**
 * Defect: tRPC answers through a fetch Response, and a Response cannot be a 304 with a body, so a 304 from
 * the transport's responseMeta makes the Response constructor throw and the call answers 500.
 *
 * Workaround: the conditional state of a tRPC call keeps its verdict as the node response's status. tRPC's
 * node adapter keeps a status already set on the response (it replaces only a 200), and Node sends a 304
 * without the body written after it (D-27).
 *
 * Remove when: responseMeta can answer 304; test/conditional.test.ts "tRPC transport" shows the answer.
 */
export const writtenFor = { dependency: '@trpc/server', version: '11.25.2' } as const;

/** A tRPC call's conditional state whose `notModified` is the 304 status of `res`. */
export function conditionalOnResponse(res: ServerResponse, ifNoneMatch: string | undefined): Conditional {
  return {
    ifNoneMatch,
    get notModified() {
      return res.statusCode === 304;
    },
    set notModified(notModified: boolean) {
      if (notModified) res.statusCode = 304;
    },
  };
}
