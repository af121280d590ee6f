import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { failureLines } from '../../db/failure';
import { ConfigError, parseConfig } from '../config';

/** Runs `work` on DATABASE_URL (required: the embedded default lives in memory), then closes it. */
export async function withConfiguredDatabase(work: (database: DatabaseHandle) => Promise<void>): Promise<void> {
  const config = parseConfig(process.env);
  if (!config.DATABASE_URL) throw new ConfigError('invalid configuration: DATABASE_URL is required for this command');
  const database = await openDatabase({ url: config.DATABASE_URL, maxConnections: 2 });
  try {
    await work(database);
  } finally {
    await database.close();
  }
}

const COMMON = {
  help: { type: 'boolean', short: 'h' },
  verbose: { type: 'boolean' },
} as const satisfies ParseArgsOptionsConfig;

/** A usage mistake: one line and a pointer to --help, exit status 2. */
export class UsageError extends Error {}

/** Runs a command: `--help` prints `usage`; a failure prints one line (db/failure.ts), `--verbose` the stack. */
export function runCli<const O extends ParseArgsOptionsConfig>(
  usage: string,
  options: O,
  body: (args: { values: ParsedValues<O>; positionals: string[] }) => Promise<void>,
) {
  const verbose = process.argv.includes('--verbose') || process.env.LOG_LEVEL === 'debug';
  const fail = (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message} (--help for usage)\n`);
      process.exit(2);
    }
    process.stderr.write(failureLines(error, process.env.DATABASE_URL, verbose));
    process.exit(1);
  };
  let args: ReturnType<typeof parseArgs<{ options: O & typeof COMMON; allowPositionals: true }>>;
  try {
    args = parseArgs({
      args: withDashValues(process.argv.slice(2), options),
      options: { ...options, ...COMMON },
      allowPositionals: true,
    });
  } catch (error) {
    return fail(new UsageError(error instanceof Error ? error.message : String(error)));
  }
  if ((args.values as { help?: boolean }).help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  body({ values: args.values as ParsedValues<O>, positionals: args.positionals }).then(() => process.exit(0), fail);
}

/**
 * A string option's value may begin with '-' (a feed cursor is base64url, and so may a brand code): parseArgs
 * refuses `--cursor -Xy…` as ambiguous, so such a value is joined to its flag (`--cursor=-Xy…`). A long option
 * in the value's place (`--cursor --brand`) is left for parseArgs to refuse.
 */
export function withDashValues(argv: string[], options: ParseArgsOptionsConfig): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name && options[name]?.type === 'string' && next?.startsWith('-') && !next.startsWith('--')) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

type ParsedValues<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O; allowPositionals: true }>
>['values'];

export function printTable(header: string[], rows: string[][]) {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  for (const row of [header, ...rows]) {
    const line = row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
    process.stdout.write(`${line.trimEnd()}\n`);
  }
}
