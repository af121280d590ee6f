/**
 * What a test file opened through the support modules (database copies, servers), closed after that file.
 * The hook that runs them is registered by test/support/per-file.ts, a setup file vitest runs before every
 * test file: these modules are loaded once per worker when files share one (isolate: false), so a hook
 * registered where they load would follow only the first file of the worker.
 */
const pending: (() => Promise<void>)[] = [];

/** Closes `resource` after the calling test file, the last opened first. */
export function afterFile(close: () => Promise<void>) {
  pending.push(close);
}

export async function closeFileResources() {
  for (let close = pending.pop(); close; close = pending.pop()) await close();
}
