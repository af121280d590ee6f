import { Webhook } from 'standardwebhooks';

// The Standard Webhooks headers of one attempt (D-28): the same webhook-id on every retry, the attempt's
// own timestamp, and a signature per secret in use (two during a rotation's overlap), space-separated.

export function signedHeaders(id: string, body: string, secrets: string[], at: Date): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}
