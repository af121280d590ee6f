import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The suite is judged by its rules, not its speed; performance lives in `npm run bench`.
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
