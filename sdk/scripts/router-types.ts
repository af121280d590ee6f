// The SDK's contract as the compiler sees it: read (never imported) by generate-types.ts, which prints
// these resolved types into standalone declarations (D-16), so the package carries no server types.
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../routers';
import type { PartnerErrorCode } from '../../server/trpc/errors';

export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type ErrorCode = PartnerErrorCode;
export type WebhookEvent = import('zod').output<
  typeof import('../../routers/webhooks/events.schema').webhookEventSchema
>;
