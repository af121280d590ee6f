import { expect } from 'vitest';
import { errorEnvelope, type PartnerErrorCode, partnerCodeOf } from '../../server/trpc/errors';

/** A procedure call fails with this partner code (createCaller throws the raw TRPCError; the code is ours). */
export async function expectPartnerError(call: Promise<unknown>, code: PartnerErrorCode) {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, `expected ${code}`).toBeDefined();
  expect(partnerCodeOf(error)).toBe(code);
}

/** An HTTP answer is exactly the error envelope of this code (partner guide § Errors, D-12). */
export function expectErrorBody(response: { status: number; body: unknown }, code: PartnerErrorCode) {
  expect({ status: response.status, body: response.body }).toEqual({
    status: errorEnvelope(code).status_code,
    body: errorEnvelope(code),
  });
}
