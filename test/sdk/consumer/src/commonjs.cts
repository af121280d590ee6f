// A CommonJS module of a partner's project: compiled to `require('@partner-reporting/sdk')`.
import sdk = require('@partner-reporting/sdk');

/** The partner's brand codes, and what a failure looks like, through the CommonJS build. */
export async function brandCodes(options: sdk.PartnerClientOptions): Promise<string[]> {
  const { items } = await sdk.createPartnerClient(options).brands.list();
  return items.map((brand: sdk.Brand) => brand.brand_code);
}

export function isPartnerApiError(error: unknown): boolean {
  return error instanceof sdk.PartnerApiError;
}

/** A webhook delivery's event type through the CommonJS build, or the error's name when it does not verify. */
export function verifiedType(secret: string, body: string, headers: Record<string, string>): string {
  try {
    return sdk.verifyWebhook(secret, body, headers).type;
  } catch (error) {
    return error instanceof sdk.WebhookVerificationError ? 'WebhookVerificationError' : 'other';
  }
}
