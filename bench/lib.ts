// Pure helpers of the HTTP benchmark (bench/http.ts), kept apart so they can be unit-tested.

/** A SQL literal for one bound parameter, as PostgreSQL reads it back to the same value. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (Array.isArray(value)) return `ARRAY[${value.map(sqlLiteral).join(', ')}]`;
  // E'' would read backslashes as escapes; a standard string only doubles the quote.
  return `'${String(value).replaceAll("'", "''")}'`;
}

/**
 * The statement with its `$n` placeholders replaced by literals, for a pgbench script (pgbench's own
 * variables cannot carry drizzle's parameters). Placeholders only occur outside literals in drizzle's SQL,
 * where every value is bound.
 */
export function inlineParams(text: string, params: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index >= params.length) throw new Error(`inlineParams: no value for $${n}`);
    return sqlLiteral(params[index]);
  });
}

export type Row = Record<string, string | number | undefined>;

/** A markdown table: the header from the first row's keys, numbers right as given. */
export function markdownTable(rows: readonly Row[]): string {
  const first = rows[0];
  if (!first) return '';
  const keys = Object.keys(first);
  const cell = (value: string | number | undefined) => (value === undefined ? '' : String(value));
  return [
    `| ${keys.join(' | ')} |`,
    `|${keys.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${keys.map((key) => cell(row[key])).join(' | ')} |`),
  ].join('\n');
}

/** Thousands separated, no decimals: 1234.5 → "1,235". */
export const whole = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
