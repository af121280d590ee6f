import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';

// All calendar logic in KST (UTC+9, no DST since 1988; D-5): days are `YYYY-MM-DD`, the SQL side at the end.

const KST_OFFSET_MS = 9 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export function kstDay(instant: Date): string {
  return new Date(instant.getTime() + KST_OFFSET_MS).toISOString().slice(0, 10);
}

/** "Today" is the current KST day (D-5). */
export function kstToday(now: Date = new Date()): string {
  return kstDay(now);
}

export function kstDayStart(day: string): Date {
  return new Date(Date.parse(`${day}T00:00:00+09:00`));
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The Monday of the week a day falls in (D-10: weeks start on Monday). */
export function mondayOf(day: string): string {
  const weekday = new Date(Date.parse(`${day}T00:00:00Z`)).getUTCDay(); // 0 = Sunday
  return addDays(day, -((weekday + 6) % 7));
}

/** The KST timestamp text of an instant: `2026-11-21T14:03:00+09:00`. */
export function kstTimestamp(instant: Date): string {
  return `${new Date(instant.getTime() + KST_OFFSET_MS).toISOString().slice(0, 19)}+09:00`;
}

/** True for a real calendar day written `YYYY-MM-DD` (rejects 2026-02-30 and 2026-1-1). */
export function isCalendarDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const parsed = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === text;
}

// The same rules in SQL; they answer the same on PGlite and PostgreSQL whatever the session's time zone.

export function kstDayOf(instant: SQLWrapper): SQL<string> {
  return sql<string>`(${instant} AT TIME ZONE 'Asia/Seoul')::date`;
}

/** to_char's pattern of kstTimestamp's text. The colons are quoted: pgbench reads `:MI` as a variable. */
const KST_TIMESTAMP_FORMAT = sql.raw(`'YYYY-MM-DD"T"HH24":"MI":"SS"+09:00"'`);

/** SQL: kstTimestamp's text of a timestamptz, formatted by the database so rows are not parsed into Dates. */
export function kstTimestampOf<Nullable extends null = never>(instant: SQLWrapper): SQL<string | Nullable> {
  // A fixed +09:00, as the text says: 'Asia/Seoul' would also apply the zone's history (DST in 1987-88).
  return sql<string | Nullable>`to_char(${instant} AT TIME ZONE INTERVAL '+09:00', ${KST_TIMESTAMP_FORMAT})`;
}

/** SQL: the Monday of a `date`, as mondayOf (D-10), by integer date arithmetic (extract(isodow) is numeric, slow). */
export function mondayOfDay(day: SQLWrapper): SQL<string> {
  return sql<string>`(${day} - (((${day} - DATE '1970-01-05') % 7 + 7) % 7))`;
}

export function kstDayStartOf(day: SQLWrapper): SQL<Date> {
  return sql<Date>`((${day})::timestamp AT TIME ZONE 'Asia/Seoul')`;
}
