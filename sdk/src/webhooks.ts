import { Webhook } from 'standardwebhooks';
import type { WebhookEvent } from './api.generated.js';

// Verifying a webhook delivery (partner guide § Webhooks): the Standard Webhooks signature over the raw
// body, checked with the `standardwebhooks` package, then the event, typed.

/** The request's headers: Node's `req.headers`, a fetch `Headers`, or a plain object. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | readonly string[] | undefined>;

/** The delivery is not signed by the secret (or is older than five minutes): answer 400, do not apply it. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function headerValues(headers: WebhookHeaders): Record<(typeof NAMES)[number], string> {
  const read = (name: string): string => {
    if (typeof headers.get === 'function') return (headers.get as (name: string) => string | null)(name) ?? '';
    const plain = headers as Record<string, string | readonly string[] | undefined>;
    const value = plain[name] ?? Object.entries(plain).find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(value) ? value.join(' ') : ((value as string | undefined) ?? '');
  };
  return Object.fromEntries(NAMES.map((name) => [name, read(name)])) as Record<(typeof NAMES)[number], string>;
}

/**
 * The event of a delivery whose signature one of `secrets` (`whsec_…`; two during a rotation) verifies,
 * read from the raw body exactly as received; throws WebhookVerificationError otherwise. Keep the
 * `webhook-id` header of the events you applied: a retry carries the same one.
 */
export function verifyWebhook(
  secrets: string | readonly string[],
  body: string | Uint8Array,
  headers: WebhookHeaders,
): WebhookEvent {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const values = headerValues(headers);
  let failure: unknown;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    try {
      const event = new Webhook(secret).verify(payload, values) as WebhookEvent;
      if (typeof event?.type !== 'string') throw new Error('not an event');
      return event;
    } catch (error) {
      failure = error;
    }
  }
  throw new WebhookVerificationError('the webhook delivery does not verify', { cause: failure });
}
