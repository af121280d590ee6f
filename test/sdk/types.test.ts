import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { appRouter } from '../../routers';
import { GENERATED_FILE, generateTypes } from '../../sdk/scripts/generate-types';
import { PROCEDURES } from '../../sdk/src/api.generated';

// The SDK's types are printed from the router (D-16); the committed copy must be what the router
// generates now, or partners would compile against a contract the server no longer keeps.

describe('the SDK types', () => {
  it('are what the router generates now (run `npm run sdk:generate` after changing a schema)', () => {
    expect(readFileSync(GENERATED_FILE, 'utf8')).toBe(generateTypes());
  });

  it('cover every procedure of the router, and name no type of the server', () => {
    expect([...PROCEDURES].sort()).toEqual(Object.keys(appRouter._def.procedures).sort());
    // Its one import is the SDK's own request types.
    expect(
      readFileSync(GENERATED_FILE, 'utf8').replace(
        "import type { APIPromise, NarrowedPage, RequestOptions } from './request.js';",
        '',
      ),
    ).not.toMatch(/\bimport\b|Raw<|Zod|z\.|Date\b/);
  });
});
