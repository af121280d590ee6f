import { inspect } from 'node:util';
import { DrizzleQueryError } from 'drizzle-orm';

// A database failure as one line an operator can act on: what failed, where, which database and why.

/** An error and its causes, outermost first: the one walk over `cause` chains, bounded (a cycle ends it). */
export function* causeChain(error: unknown): Generator<Record<string, unknown>> {
  let current = error;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    yield current as Record<string, unknown>;
    current = (current as { cause?: unknown }).cause;
  }
}

type DriverError = Error & { code?: unknown; address?: unknown; port?: unknown; severity?: unknown };

export const CONNECT_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved now',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'the connection was reset',
  ENOENT: 'no such socket',
  CONNECT_TIMEOUT: 'timed out connecting',
  CONNECTION_CLOSED: 'the server closed the connection',
  CONNECTION_ENDED: 'the connection was ended',
  CONNECTION_DESTROYED: 'the connection was destroyed',
};

/** SQLSTATE classes that mean the session never started: 08 connection, 28 authorization, 3D catalog, 57P. */
const CONNECT_STATES = /^(08|28|3D|57P)/;

/** postgres.js's own connection codes: no other client raises them. */
const POSTGRES_JS_CODES = /^(CONNECT_TIMEOUT|CONNECTION_(CLOSED|ENDED|DESTROYED))$/;

/** The driver's error in a chain of causes; a socket error outside a drizzle query is not the database's. */
function driverError(error: unknown): DriverError | undefined {
  let wrapped = false;
  for (const current of causeChain(error)) {
    if (!(current instanceof Error)) return undefined;
    const { code, severity } = current as DriverError;
    if (typeof severity === 'string' || (typeof code === 'string' && (POSTGRES_JS_CODES.test(code) || wrapped)))
      return current;
    wrapped ||= current instanceof DrizzleQueryError;
  }
  return undefined;
}

function target(url: string | undefined) {
  try {
    const parsed = new URL(url ?? '');
    const socket = parsed.searchParams.get('host');
    return {
      at: socket ?? `${decodeURIComponent(parsed.hostname)}:${parsed.port || '5432'}`,
      database: decodeURIComponent(parsed.pathname.slice(1)) || undefined,
      ssl: /^(require|verify-ca|verify-full)$/.test(parsed.searchParams.get('sslmode') ?? ''),
    };
  } catch {
    return undefined;
  }
}

/** One line for a failure of the database at `url`; undefined when it is not the database's. */
export function describeDatabaseFailure(error: unknown, url: string | undefined): string | undefined {
  const cause = driverError(error);
  if (!cause) return undefined;
  const code = String(cause.code);
  const configured = target(url);
  const port = cause.port === undefined ? '' : `:${cause.port}`;
  const address = typeof cause.address === 'string' ? `${cause.address}${port}` : configured?.at;
  const where = url
    ? `PostgreSQL at ${address ?? 'the configured address'}${configured?.database ? ` (database "${configured.database}")` : ''}`
    : 'the embedded database (PGlite)';
  if (typeof cause.severity === 'string') {
    // The server answered: its message names the object (`database "x" does not exist`).
    const hint = code === '42P01' ? '; is the database migrated (npm run db:migrate)?' : '';
    return CONNECT_STATES.test(code)
      ? `cannot connect to ${where}: ${cause.message} (${code})`
      : `${where} refused a statement: ${cause.message} (${code})${hint}`;
  }
  if (code === 'ECONNRESET' && /TLS|SSL/i.test(cause.message))
    return `cannot connect to ${where}: the TLS handshake failed${configured?.ssl ? ': the server does not support SSL, which the URL requires (sslmode)' : ''} (${code})`;
  const words = CONNECT_CODES[code];
  if (words) return `cannot connect to ${where}: ${words} (${code})`;
  return `${where}: ${cause.message} (${code})`;
}

export function failureLines(error: unknown, url: string | undefined, verbose: boolean): string {
  const line = describeDatabaseFailure(error, url) ?? (error instanceof Error ? error.message : String(error));
  return verbose ? `${line}\n${inspect(error, { depth: 5 })}\n` : `${line}\n`;
}
