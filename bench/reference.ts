import { isDeepStrictEqual } from 'node:util';
import type { Db } from '../db/client';
import type { BrandEntry, BrandScope } from '../db/queries/brands';
import { type ReviewFilters, reviewListQuery } from '../db/queries/reviews';
import { whole } from './lib';
import { statementShape } from './reference-service';

// The hand-written reference service of bench:http (bench/reference-service.ts): what it is given, that it
// answers what the API answers, and how the API compares with it. A partner call's cost to the API is
// read as a ratio to the reference measured in the same run, on the same machine, and as CPU per call.

/** The module the bench runs as a child process (`node --import tsx`). */
export const REFERENCE_SERVICE = new URL('./reference-service.ts', import.meta.url).pathname;

/** A review list the reference must answer: its filters and its page. */
export type ReferenceList = { filters: ReviewFilters; page: number; limit: number };

/**
 * The reference's configuration: the demo key, the key's brands, and the statement text of each list
 * shape, taken from reviewListQuery itself so both run the same SQL.
 */
export function referenceConfig(
  db: Db,
  key: string,
  scope: BrandScope & { partnerId: number },
  brands: Iterable<BrandEntry>,
  lists: readonly ReferenceList[],
) {
  const statements: Record<string, string> = {};
  for (const { filters, page, limit } of lists) {
    const offset = (page - 1) * limit;
    const text = reviewListQuery(db, scope, filters, { limit: limit + 1, offset }).toSQL().sql;
    statements[statementShape(Object.keys(filters), limit + 1, offset > 0)] = text;
  }
  const own: Record<string, number> = {};
  for (const brand of brands) if (brand.partnerId === scope.partnerId) own[brand.brandCode] = brand.id;
  return JSON.stringify({ key, brands: own, statements });
}

/** Throws unless the two bodies are the same JSON value: the reference must answer what the API answers. */
export function assertSameAnswer(name: string, api: string, reference: string) {
  if (!isDeepStrictEqual(JSON.parse(api), JSON.parse(reference)))
    throw new Error(
      `${name}: the reference answers otherwise than the API\nAPI: ${api.slice(0, 400)}\nreference: ${reference.slice(0, 400)}`,
    );
}

type Max = { reqPerSec: number };
type Cpu = { serverMs: number } | undefined;

/** The table's columns for the reference: its throughput, the API's share of it, and both CPU costs per call. */
export function referenceColumns(api: { max: Max; cpu: Cpu }, reference: { max: Max; cpu: Cpu } | undefined) {
  if (!reference)
    return { 'reference req/s': '', 'API / reference': '', 'server CPU ms per call, API / reference': '' };
  return {
    'reference req/s': whole(reference.max.reqPerSec),
    'API / reference': (api.max.reqPerSec / reference.max.reqPerSec).toFixed(2),
    'server CPU ms per call, API / reference':
      api.cpu && reference.cpu ? `${api.cpu.serverMs.toFixed(3)} / ${reference.cpu.serverMs.toFixed(3)}` : '',
  };
}
