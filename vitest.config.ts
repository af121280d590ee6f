import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Each driver keeps its own record of the files' durations, which Vitest starts the longest first by:
    // files that run only on PostgreSQL (a real replica, two instances) are skipped, and so instant, on PGlite.
    name: process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Closes what each file opened through test/support, after that file (test/support/after-file.ts).
    setupFiles: ['test/support/per-file.ts'],
    pool: 'forks',
    // Vitest's default leaves a core to its main process, which only reports: on two cores that is one
    // worker. Much of a worker's time is spent waiting on the processes it starts (npm, tsc, the server),
    // so two workers at least.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    poolOptions: {
      forks: {
        // A worker runs file after file in one process: the server's modules, PGlite's WebAssembly and
        // the test support are loaded once per worker, not once per file. Files share no state through
        // them: each opens its own database copy and servers, closed after it (test/support/per-file.ts),
        // and reads its own samples (test/support/endpoints.ts). Tracing is shut down by the file that
        // starts it; metrics, once a file enables them, stay on for the worker, counted and never read.
        isolate: false,
      },
    },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
