import type { Db } from '../client';

// Statements built and prepared once per database handle, for the queries every call of a shape runs.

const MAX_SHAPES = 256;

type Preparable = { prepare(name: string): { execute(values: Record<string, unknown>): Promise<unknown> } };
const prepared = new WeakMap<Db, Map<string, unknown>>();

/**
 * A statement built and prepared once per handle under `name`, which names its shape (D-25): calls of one
 * shape run it with their own values, and PostgreSQL plans it once per connection. At most MAX_SHAPES.
 */
export function preparedOnce<Query extends Preparable>(
  db: Db,
  name: string,
  build: () => Query,
): ReturnType<Query['prepare']> {
  const statements = prepared.get(db) ?? new Map<string, unknown>();
  prepared.set(db, statements);
  let statement = statements.get(name);
  if (!statement) {
    if (statements.size >= MAX_SHAPES) statements.clear();
    statement = build().prepare(name);
    statements.set(name, statement);
  }
  return statement as ReturnType<Query['prepare']>;
}
