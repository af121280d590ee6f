import { z } from 'zod';

// The success envelope (partner guide § Responses): procedures return through `success`, so REST, tRPC and
// createCaller all see the same body, and the OpenAPI 200 response describes it. (Errors: server/errors.ts.)

export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({
    status: z.literal('SUCCESS'),
    status_code: z.literal(200),
    message: z.literal('OK'),
    data,
  });
}

export function success<T>(data: T) {
  return { status: 'SUCCESS' as const, status_code: 200 as const, message: 'OK' as const, data };
}
