import { openDatabase } from '../../db/client';
import { ConfigError, parseConfig } from '../config';

/** The configured database for a CLI: DATABASE_URL is required (the embedded default lives in memory). */
export async function openConfiguredDatabase() {
  const config = parseConfig(process.env);
  if (!config.DATABASE_URL) {
    throw new ConfigError('invalid configuration: DATABASE_URL is required for this command');
  }
  return openDatabase({ url: config.DATABASE_URL, maxConnections: 2 });
}

/** Runs a CLI body, printing one line and exiting 1 on failure. */
export function runCli(body: () => Promise<void>) {
  body().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
