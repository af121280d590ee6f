import type { ChildProcess } from 'node:child_process';
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

/**
 * The child processes and scratch databases a bench makes, stopped and dropped on every exit path, Ctrl-C
 * included. Each child leads its own process group (detached), so `npm start`'s node goes with it.
 */
export function cleanUpOnExit() {
  const children = new Set<ChildProcess>();
  const cleanups: (() => Promise<void>)[] = [];
  const killGroup = (child: ChildProcess) => {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
    }
    children.delete(child);
  };
  const cleanUp = async () => {
    for (const child of children) killGroup(child);
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\n${signal}: stopping children, dropping scratch databases\n`);
      cleanUp().finally(() => process.exit(130));
    });
  }
  return { children, cleanups, cleanUp, killGroup };
}
