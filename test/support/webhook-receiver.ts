import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

// A partner's receiver for the tests: node:http on 127.0.0.1, verifying every delivery's signature with the
// `standardwebhooks` package against each secret it knows. A request no secret verifies fails the test
// (it is kept in `unverified`). `answer` decides each reply; by default 204.

export type Received = {
  id: string;
  event: { type: string; timestamp: string; data: Record<string, unknown> };
  headers: http.IncomingHttpHeaders;
  /** Which of the receiver's secrets verified it. */
  verifiedBy: string[];
};

/** A review as the list and the events carry it. */
export type Review = { review_id: string } & Record<string, unknown>;

/** A copy of a brand's reviews made by applying events in order: what a partner's receiver would hold. */
export function applied(events: Received[]): Map<string, Review> {
  const copy = new Map<string, Review>();
  for (const { event } of events) {
    const id = event.data.review_id as string;
    if (event.type === 'review.upserted') copy.set(id, event.data.review as Review);
    if (event.type === 'review.deleted') copy.delete(id);
  }
  return copy;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string };

export class WebhookReceiver {
  /** Deliveries answered 2xx, in arrival order. */
  readonly received: Received[] = [];
  /** Every verified request, whatever it was answered. */
  readonly requests: Received[] = [];
  readonly unverified: http.IncomingHttpHeaders[] = [];
  /** Requests under way per review_id, and the most at once seen: two events of a review must never overlap. */
  private readonly inFlight = new Map<string, number>();
  maxInFlightPerReview = 0;
  secrets: string[] = [];
  answer: (received: Received) => Answer | Promise<Answer> = () => ({ status: 204 });
  /** Connections opened to this receiver so far. */
  connections = 0;
  /**
   * Resets a kept connection at its next request, before reading it: what a sender meets when the receiver
   * closed the connection as idle just as a request went out on it.
   */
  resetKeptConnections = false;
  private readonly served = new WeakSet<object>();
  private readonly waiters: (() => void)[] = [];
  private readonly server = http
    .createServer((request, response) => void this.handle(request, response))
    .on('connection', () => this.connections++);

  async start(): Promise<string> {
    await once(this.server.listen(0, '127.0.0.1'), 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Resolves once `count` verified requests have arrived (events, not a timer). */
  async waitForRequests(count: number): Promise<void> {
    while (this.requests.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  ids(): string[] {
    return this.received.map((item) => item.id);
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse) {
    if (this.resetKeptConnections && this.served.has(request.socket)) {
      request.socket.resetAndDestroy();
      return;
    }
    this.served.add(request.socket);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = request.headers as Record<string, string>;
    const verifiedBy = this.secrets.filter((secret) => {
      try {
        new Webhook(secret).verify(body, headers);
        return true;
      } catch {
        return false;
      }
    });
    if (verifiedBy.length === 0) {
      this.unverified.push(request.headers);
      response.writeHead(400).end();
      return;
    }
    const event = JSON.parse(body) as Received['event'];
    const received = { id: headers['webhook-id'] ?? '', event, headers: request.headers, verifiedBy };
    this.requests.push(received);
    const review = typeof event.data.review_id === 'string' ? event.data.review_id : undefined;
    for (const wake of this.waiters.splice(0)) wake();
    if (review) {
      const now = (this.inFlight.get(review) ?? 0) + 1;
      this.inFlight.set(review, now);
      this.maxInFlightPerReview = Math.max(this.maxInFlightPerReview, now);
    }
    try {
      const answer = await this.answer(received);
      if (answer.status >= 200 && answer.status < 300) this.received.push(received);
      response.writeHead(answer.status, answer.headers).end(answer.body);
    } finally {
      if (review) this.inFlight.set(review, (this.inFlight.get(review) ?? 1) - 1);
    }
  }
}
