import http from 'node:http';
import { Webhook } from 'standardwebhooks';

// The bench's partner receiver (bench/webhooks.ts), a process of its own as a partner's server would be:
// verifies each delivery with `standardwebhooks`, answers in 5 ms, and reports to its parent, every 50 ms,
// when each review's event arrived (epoch milliseconds) and how many deliveries failed to verify.
// Messages in: { secret }. Messages out: { port }, then { arrivals: [reviewId, at][], unverified }.

const RECEIVER_MS = 5;
const REPORT_MS = 50;

let verifier: Webhook | undefined;
let arrivals: [string, number][] = [];
let unverified = 0;

const server = http.createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    if (!verifier) throw new Error('no secret yet');
    const event = verifier.verify(
      Buffer.concat(chunks).toString('utf8'),
      request.headers as Record<string, string>,
    ) as {
      data: { review_id?: string };
    };
    if (event.data.review_id) arrivals.push([event.data.review_id, performance.timeOrigin + performance.now()]);
  } catch {
    unverified++;
  }
  setTimeout(() => response.writeHead(204).end(), RECEIVER_MS);
});

process.on('message', (message: { secret?: string }) => {
  if (message.secret) verifier = new Webhook(message.secret);
});
// The parent going away ends the receiver.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as { port: number }).port });
  setInterval(() => {
    if (arrivals.length === 0) return;
    process.send?.({ arrivals, unverified });
    arrivals = [];
  }, REPORT_MS);
});
