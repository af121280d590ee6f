import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which statements PostgreSQL may run on a cached plan. The server's statements are prepared
 * once per connection (db/postgres-statements.ts), and PostgreSQL then reuses one generic plan for a statement whose
 * custom plans cost no less: planning is most of what a short list statement costs the database. That
 * is right wherever the best plan does not depend on the values, and wrong where it does: a keyword's
 * plan (the trigram or grams index, or the ordered index scan) depends on how common the word is, and a
 * plan cached after five common words would read a whole brand for an absent one. Such work runs inside
 * `plannedPerCall`, and its statements are planned for their own values every time.
 */
const perCall = new AsyncLocalStorage<true>();

/** Runs `work` (awaited inside, as drizzle's queries start when awaited) with every statement planned for its values. */
export function plannedPerCall<T>(work: () => PromiseLike<T>): Promise<T> {
  return perCall.run(true, async () => await work());
}

/** Whether the statement about to be sent must be planned for its own values. */
export function mustPlanPerCall(): boolean {
  return perCall.getStore() === true;
}
