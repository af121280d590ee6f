import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
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
        "import type { APIPromise, ChangeFeed, NarrowedPage, RequestOptions } from './request.js';",
        '',
      ),
    ).not.toMatch(/\bimport\b|Raw<|Zod|z\.|Date\b/);
  });
});

/** How an editor's hover names the type of each `probe_*` variable of `source`, which imports the SDK. */
function hovers(source: string): Record<string, string> {
  const file = path.resolve(import.meta.dirname, '../../sdk/hover-probe.ts');
  const options = {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) =>
    name === file ? ts.createSourceFile(name, source, version) : getSourceFile(name, version);
  const program = ts.createProgram({ rootNames: [file], options, host });
  const checker = program.getTypeChecker();
  const found: Record<string, string> = {};
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text.startsWith('probe_')) {
      found[node.name.text] = checker.typeToString(checker.getTypeAtLocation(node.name));
    }
    ts.forEachChild(node, visit);
  };
  visit(program.getSourceFile(file) as ts.SourceFile);
  return found;
}

describe('the SDK types in an editor', () => {
  it('show the answers by name on hover (Review, SalesRow, ...), not as whole objects or unions', () => {
    const shown = hovers(`
      import { createPartnerClient, paginate } from './src/index.js';
      const client = createPartnerClient({ baseUrl: 'http://x', apiKey: 'k' });
      export async function probe() {
        const probe_review = await client.reviews.get({ brand_code: 'b', review_id: 'r' });
        const probe_user = await client.users.get({ brand_code: 'b', user_code: 'u' });
        const probe_brands = (await client.brands.list()).items;
        const probe_shop = (await client.shops.list({ brand_code: 'b' })).items[0];
        const probe_stats = (await client.reviewStats.list({ brand_code: 'b', group_by: 'date' as 'date' | 'shop' | 'platform' })).items;
        const probe_sales = (await client.sales.list({ brand_code: 'b', group_by: 'shop' as 'shop' | 'platform' | 'user' | 'date' | 'week' })).items;
        const probe_feed = client.reviews.changes({ brand_code: 'b' });
        for await (const probe_change of probe_feed) return probe_change;
        for await (const probe_item of paginate(client.reviews.list, { brand_code: 'b' })) return probe_item;
      }
    `);
    expect(shown).toEqual({
      probe_review: 'Review',
      probe_user: 'User',
      probe_brands: 'Brand[]',
      probe_shop: 'Shop',
      probe_stats: 'ReviewStatsRow[]',
      probe_sales: 'SalesRow[]',
      probe_feed: 'ChangeFeed<{ items: ReviewChange[]; limit: number; has_next: boolean; next_cursor: string; }>',
      probe_change: 'ReviewChange',
      probe_item: 'Review',
    });
  });
});
