import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEMO_KEYS } from '../db/seed/demo';
import { appRouter } from '../routers';
import type { Services } from '../server/trpc/services';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND, ENDPOINTS, loadSamples } from './support/endpoints';
import { callerFor, testServices } from './support/services';

// D-25: every answer is parsed against its procedure's `.output` schema (tRPC's own output parsing), so
// an answer that broke it would be a 500. Every procedure of the router, with each variant of its
// answer's shape (every group_by, a full page), answers, and its schema describes exactly the bytes sent:
// parsing the answer again gives it back, no key dropped or reordered, no value coerced.

type Procedure = { _def: { inputs: unknown[]; output?: unknown } };
const procedures = appRouter._def.procedures as unknown as Record<string, Procedure>;

/** The parameter sets that change an answer's shape: none, a page of 100, and each value of group_by. */
function variantsOf(name: string): Record<string, string | number>[] {
  const [input] = procedures[name]?._def.inputs ?? [];
  if (!(input instanceof z.ZodType)) return [{}];
  const { properties = {} } = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { enum?: string[] }>;
  };
  const page: Record<string, number> = 'limit' in properties ? { limit: 100 } : {};
  const groups = properties.group_by?.enum ?? [];
  return [{}, page, ...groups.map((group_by) => ({ ...page, group_by }))];
}

let services: Services;
beforeAll(async () => {
  const database = await openTestDatabase();
  services = testServices(database.db);
  await loadSamples(services);
});

describe('every answer passes its output schema, unchanged by it', () => {
  for (const endpoint of ENDPOINTS) {
    it(endpoint.name, async () => {
      const output = procedures[endpoint.name]?._def.output;
      if (!(output instanceof z.ZodType)) throw new Error(`${endpoint.name} declares no zod output schema`);
      const caller = callerFor(services, DEMO_KEYS.active);
      for (const query of variantsOf(endpoint.name)) {
        const answer = await endpoint.call(caller, DEMO_BRAND, DEMO_BRAND, query);
        const parsed = output.safeParse(answer);
        expect(parsed.error?.issues ?? [], `${endpoint.name} ${JSON.stringify(query)}`).toEqual([]);
        // Key order too: JSON text is what the partner reads.
        expect(JSON.stringify(answer), `${endpoint.name} ${JSON.stringify(query)}`).toBe(JSON.stringify(parsed.data));
      }
    });
  }
});
