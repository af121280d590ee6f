import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import type { DatabaseHandle, Db } from '../../db/client';
import { insertDeliveries } from '../../db/queries/webhook-deliveries';
import type { WebhookEndpoint } from '../../db/queries/webhooks';
import { webhookEndpoints } from '../../db/schema';
import { DEMO_WEBHOOK } from '../../db/seed/demo';
import { silentLogger } from '../../server/logger';
import { addEndpoint, endpointNamed } from '../../server/webhooks/admin';
import { testEvent } from '../../server/webhooks/events';
import { checkTarget } from '../../server/webhooks/target';
import { WebhookWorker } from '../../server/webhooks/worker';

/** A webhook.test event queued for the workers to deliver (the operator's `test` attempts one itself). */
export async function queueTest(db: Db, endpoint: WebhookEndpoint, now = new Date()) {
  const event = testEvent(endpoint, now);
  await insertDeliveries(db, [event]);
  return event.id;
}

/** An endpoint of Demo Foods delivering to `url` (loopback: allowed in tests); every brand of it by default. */
export async function addTestEndpoint(
  db: Db,
  key: Buffer,
  url: string,
  { brandCodes = [], criticalOnly = false }: { brandCodes?: string[]; criticalOnly?: boolean } = {},
) {
  const checked = await checkTarget(url, true);
  if (!('target' in checked)) throw new Error(checked.refused);
  return addEndpoint(db, key, { partner: 'Demo Foods', target: checked.target, brandCodes, criticalOnly });
}

/**
 * One delivery exactly as the service sends it (a `webhook.test` event through the worker), captured raw
 * by a receiver on 127.0.0.1: what a partner's verifier must accept.
 */
export async function realDelivery(database: DatabaseHandle) {
  // Only this endpoint is delivered to.
  await database.db
    .update(webhookEndpoints)
    .set({ status: 'DISABLED' })
    .where(eq(webhookEndpoints.id, DEMO_WEBHOOK.id));
  let captured: { body: string; headers: Record<string, string> } | undefined;
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request.headers[name])]),
    );
    captured = { body: Buffer.concat(chunks).toString('utf8'), headers };
    response.writeHead(204).end();
  });
  await once(server.listen(0, '127.0.0.1'), 'listening');
  try {
    const key = randomBytes(32);
    const added = await addTestEndpoint(
      database.db,
      key,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    );
    await queueTest(database.db, await endpointNamed(database.db, added.id));
    const worker = new WebhookWorker({
      db: database.db,
      log: silentLogger,
      secretsKey: key,
      allowPrivateTargets: true,
    });
    await worker.runOnce();
    await worker.stop();
    if (!captured) throw new Error('the delivery did not arrive');
    return { ...captured, secret: added.secret, webhookId: added.id };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
