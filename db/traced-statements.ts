import { querySignal } from './cancellation';
import type { Db } from './client';

/** Runs a statement's work inside a span named for its text (server/tracing.ts `statement`). */
export type StatementSpan = <T>(text: string, work: () => Promise<T>) => Promise<T>;

type Prepared = { execute?: (...args: unknown[]) => Promise<unknown>; all?: (...args: unknown[]) => Promise<unknown> };
type Session = { prepareQuery: (query: { sql: string }, ...rest: unknown[]) => Prepared };

/**
 * A request's statements as spans (D-22): drizzle prepares each statement through its
 * session (selects, relational queries and `db.execute` alike, on both drivers), so the session's
 * `prepareQuery` is the one place that sees the statement's text and its run. Only the text is given to
 * the span: placeholders, never the parameters. Only a request's statements are spans (those run under
 * its query signal, db/cancellation.ts): a directory's shared reload, which a request may start but
 * does not wait for, and the daily build are no request's work. Called once on a handle, only when
 * tracing is on.
 */
export function traceStatements(db: Db, span: StatementSpan): void {
  const session = (db as unknown as { session: Session }).session;
  const prepareQuery = session.prepareQuery.bind(session);
  session.prepareQuery = (query, ...rest) => {
    const prepared = prepareQuery(query, ...rest);
    const { execute, all } = prepared;
    if (execute)
      prepared.execute = (...args) =>
        querySignal() ? span(query.sql, () => execute.apply(prepared, args)) : execute.apply(prepared, args);
    if (all)
      prepared.all = (...args) =>
        querySignal() ? span(query.sql, () => all.apply(prepared, args)) : all.apply(prepared, args);
    return prepared;
  };
}
