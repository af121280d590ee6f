import { once } from 'node:events';
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { DEMO_WEBHOOK } from '../../db/seed/demo';
import { runCli } from './database';

// The partner's side of the demo's webhook (D-28): a receiver that verifies each delivery's signature with
// the demo endpoint's secret and prints the event in one line.

const USAGE = `usage: npm run demo:webhook-receiver [-- --port N --secret whsec_…]

Listens on 127.0.0.1:4000 (the demo endpoint of Demo Foods' chicken-house, which npm start delivers to),
verifies each delivery (Standard Webhooks, with the demo secret ${DEMO_WEBHOOK.secret}) and prints
one line per event. Start it, then npm start, then npm run demo:changes. Ctrl-C stops it.`;

const OPTIONS = { port: { type: 'string' }, secret: { type: 'string' } } as const;

type Event = { type: string; timestamp: string; data: Record<string, unknown> };

/** One line a person reads: the event, and for a review its stars, whether it is critical, and its text. */
function lineOf(id: string, event: Event): string {
  const review = event.data.review as { rating: number | null; is_critical: boolean; content: string } | null;
  const about = review
    ? ` ★${review.rating ?? '-'}${review.is_critical ? ' CRITICAL' : ''} ${JSON.stringify(review.content.slice(0, 60))}`
    : '';
  const subject = event.data.review_id ?? event.data.webhook_id ?? '';
  return `${event.timestamp} ${event.type} ${event.data.brand_code ?? ''} ${subject}${about} (${id})`;
}

runCli(USAGE, OPTIONS, async ({ values }) => {
  const verifier = new Webhook(values.secret ?? DEMO_WEBHOOK.secret);
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      const event = verifier.verify(body, request.headers as Record<string, string>) as Event;
      process.stdout.write(`${lineOf(String(request.headers['webhook-id']), event)}\n`);
      response.writeHead(204).end();
    } catch (error) {
      process.stdout.write(`refused a delivery that does not verify: ${(error as Error).message}\n`);
      response.writeHead(400).end();
    }
  });
  const port = Number(values.port ?? new URL(DEMO_WEBHOOK.url).port);
  await once(server.listen(port, '127.0.0.1'), 'listening');
  process.stdout.write(
    `verifying webhook deliveries on http://127.0.0.1:${port}${new URL(DEMO_WEBHOOK.url).pathname}\n`,
  );
  await new Promise((resolve) => process.once('SIGINT', resolve));
  server.close();
});
