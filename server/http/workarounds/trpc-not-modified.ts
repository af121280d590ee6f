import type { ServerResponse } from 'node:http';
import type { Conditional } from '../../trpc/context';

/**
 * Defect: a 304 from tRPC's responseMeta makes its fetch Response throw (a 304 cannot have a body): a 500.
 * Workaround: the verdict is the node response's status, which the adapter keeps; Node drops the body (D-27).
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
