import { causeChain } from '../db/failure';

/** An error as a log line may hold it (D-22): no values, one short stack; a statement as placeholders only. */
export function boundedError(value: unknown): unknown {
  if (!isErrorLike(value)) return typeof value === 'string' ? value.slice(0, MAX_MESSAGE) : value;
  const chain = [...causeChain(value)].slice(0, MAX_DEPTH) as ErrorLike[];
  const last = chain.at(-1) as ErrorLike;
  let innermost: string | undefined;
  if (last.cause != null) innermost = chain.length === MAX_DEPTH ? '…' : String(last.cause).slice(0, MAX_MESSAGE);
  // Described from the innermost cause out, so a wrapper can tell it only repeats its cause's message.
  return chain.reduceRight<Described | string | undefined>(
    (cause, error, at) => (isErrorLike(error) ? describe(error, cause, at === 0) : String(error).slice(0, MAX_MESSAGE)),
    innermost,
  );
}

type ErrorLike = { name?: unknown; message?: unknown; stack?: unknown; code?: unknown; cause?: unknown };

const MAX_MESSAGE = 300;
const MAX_STATEMENT = 200;
const MAX_FRAMES = 8;
const MAX_DEPTH = 4;

type Described = {
  type: string;
  message: string;
  code?: string;
  severity?: string;
  statement?: string;
  stack?: string;
  cause?: Described | string;
};

function describe(error: ErrorLike, cause: Described | string | undefined, outermost: boolean): Described {
  const type = typeof error.name === 'string' ? error.name.slice(0, 60) : 'Error';
  const raw = typeof error.message === 'string' ? error.message : '';
  // A wrapper that copied its cause's message (tRPC does) says what the cause says, as it is logged.
  const copied = isErrorLike(error.cause) && error.cause.message === raw && typeof cause === 'object';
  const described: Described = { type, message: copied ? cause.message : messageOf(error, raw) };
  if (typeof error.code === 'string' || typeof error.code === 'number')
    described.code = String(error.code).slice(0, 40);
  const { severity, query } = error as { severity?: unknown; query?: unknown };
  if (typeof severity === 'string') described.severity = severity.slice(0, 20);
  // DrizzleQueryError: the statement as sent, placeholders only (its parameters are never read).
  if (isDrizzleQueryError(error) && typeof query === 'string') described.statement = statementOf(query);
  if (outermost && typeof error.stack === 'string') described.stack = framesOf(error.stack);
  if (cause !== undefined) described.cause = cause;
  return described;
}

function messageOf(error: ErrorLike, message: string): string {
  // drizzle: "Failed query: <sql>\nparams: <values>"; the statement is logged apart, the values never.
  if (isDrizzleQueryError(error) || message.startsWith('Failed query:')) return 'Failed query';
  // PostgreSQL's own messages quote the offending value (`invalid input syntax for type date: "…"`).
  if (isPostgresError(error)) return message.replace(QUOTED_VALUE, '"…"').slice(0, MAX_MESSAGE);
  return message.slice(0, MAX_MESSAGE);
}

/** drizzle's DrizzleQueryError (its name is a plain "Error"): the statement and its parameters attached. */
function isDrizzleQueryError(error: ErrorLike) {
  const { query, params } = error as { query?: unknown; params?: unknown };
  return typeof query === 'string' && Array.isArray(params);
}

/** A server error from either driver (postgres.js PostgresError, PGlite's): a SQLSTATE and a severity. */
function isPostgresError(error: ErrorLike) {
  const { severity } = error as { severity?: unknown };
  return typeof severity === 'string' && typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code);
}

/** Quoted text in a PostgreSQL message, except the names of schema objects (relation "reviews"). */
const QUOTED_VALUE =
  /(?<!\b(?:relation|column|table|constraint|index|function|type|schema|database|role|sequence|view|operator|extension) )"[^"]*"/g;

function statementOf(query: string): string {
  const text = query.replace(/\s+/g, ' ').trim();
  return text.length > MAX_STATEMENT ? `${text.slice(0, MAX_STATEMENT)}…` : text;
}

/** The frames of a stack without its first line, which repeats the message (and with it any values). */
function framesOf(stack: string): string {
  const frames = stack.split('\n').filter((line) => line.trimStart().startsWith('at '));
  return frames
    .slice(0, MAX_FRAMES)
    .map((line) => line.trim().slice(0, 200))
    .join('\n');
}

function isErrorLike(value: unknown): value is ErrorLike {
  return (
    value instanceof Error ||
    (typeof value === 'object' && value !== null && typeof (value as ErrorLike).message === 'string')
  );
}
