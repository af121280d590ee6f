import { defineConfig } from 'drizzle-kit';

// Only `drizzle-kit generate` is used: migrations are committed and applied by db/client.ts on both
// drivers, so no database credentials are needed here.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
});
