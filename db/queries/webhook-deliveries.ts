import type { Db } from '../client';
import { webhookDeliveries } from '../schema';
import type { ChangesPosition } from './review-changes';
import { movePosition } from './webhooks';

// The events of webhook endpoints and their attempts (D-28). A worker holds an event through a lease (an
// owner and an expiry on its row), never through a transaction: no transaction spans an HTTP attempt.

export type NewDelivery = Pick<
  typeof webhookDeliveries.$inferInsert,
  'id' | 'endpointId' | 'brandId' | 'reviewCode' | 'type' | 'body'
>;

export async function insertDeliveries(db: Db, deliveries: NewDelivery[]) {
  if (deliveries.length > 0) await db.insert(webhookDeliveries).values(deliveries);
}

/**
 * The events read from a brand's position, and the position moved past them, in one transaction: false
 * (and nothing written) when another instance moved the position first.
 */
export async function recordEvents(
  db: Db,
  move: { endpointId: string; brandId: number; from: ChangesPosition | undefined; to: ChangesPosition },
  deliveries: NewDelivery[],
): Promise<boolean> {
  return db
    .transaction(async (tx) => {
      if (!(await movePosition(tx, move.endpointId, move.brandId, move.from, move.to))) throw new MovedElsewhere();
      await insertDeliveries(tx, deliveries);
      return true;
    })
    .catch((error: unknown) => {
      if (error instanceof MovedElsewhere) return false;
      throw error;
    });
}

class MovedElsewhere extends Error {}
