import { isDeepStrictEqual } from 'node:util';
import type { Db } from '../db/client';
import type { BrandEntry } from '../db/queries/brands';
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
  scope: BrandEntry,
  brands: Iterable<BrandEntry>,
  lists: readonly ReferenceList[],
) {
  const statements: Record<string, string> = {};
  for (const { filters, page, limit } of lists) {
    const offset = (page - 1) * limit;
    const text = reviewListQuery(db, scope, filters, { limit: limit + 1, offset }).toSQL().sql;
    statements[statementShape(Object.keys(filters), limit + 1, offset > 0, filters.keyword)] = text;
  }
  const own: Record<string, { id: number; min: number; max: number }> = {};
  for (const brand of brands)
    if (brand.partnerId === scope.partnerId) own[brand.brandCode] = { id: brand.id, ...brand.criticalRange };
  return JSON.stringify({ key, brands: own, statements });
}

/** Throws unless the two bodies are the same JSON value: the reference must answer what the API answers. */
export function assertSameAnswer(name: string, api: string, reference: string) {
  if (!isDeepStrictEqual(JSON.parse(api), JSON.parse(reference)))
    throw new Error(
      `${name}: the reference answers otherwise than the API\nAPI: ${api.slice(0, 400)}\nreference: ${reference.slice(0, 400)}`,
    );
}

/** One max-throughput run of a server: calls a second, and its process's CPU per call. */
export type PeerRun = { max: { reqPerSec: number }; cpu?: { serverMs: number } | undefined };

/**
 * Runs each peer's measurement in turn, `rounds` times (A, B, C, A, B, C, …), and keeps the best of each:
 * the most calls a second and the least CPU per call seen. On a shared machine the load drifts between
 * two runs; alternating and keeping the best compares the peers under the same conditions.
 */
export async function alternate<K extends string>(
  rounds: number,
  peers: Partial<Record<K, () => Promise<PeerRun>>>,
): Promise<Partial<Record<K, PeerRun>>> {
  const best: Partial<Record<K, PeerRun>> = {};
  for (let round = 0; round < rounds; round++) {
    for (const name of Object.keys(peers) as K[]) {
      const measure = peers[name];
      if (!measure) continue;
      const run = await measure();
      const kept = best[name];
      const cpus = [kept?.cpu, run.cpu].filter((cpu) => cpu !== undefined);
      best[name] = {
        max: kept && kept.max.reqPerSec >= run.max.reqPerSec ? kept.max : run.max,
        cpu: cpus.sort((a, b) => a.serverMs - b.serverMs)[0],
      };
    }
  }
  return best;
}

/**
 * The table's columns for the peers of a scenario, measured alternately: the reference's throughput, the
 * API's share of it and both CPU costs per call; with a baseline (another checkout's server), its share too.
 */
export function peerColumns(peers: Partial<Record<'api' | 'baseline' | 'reference', PeerRun>> | undefined) {
  const { api, baseline, reference } = peers ?? {};
  const share = (a: PeerRun | undefined, b: PeerRun | undefined) =>
    a && b ? (a.max.reqPerSec / b.max.reqPerSec).toFixed(2) : '';
  const cpu = (run: PeerRun | undefined) => (run?.cpu ? run.cpu.serverMs.toFixed(3) : '–');
  return {
    'reference req/s': reference ? whole(reference.max.reqPerSec) : '',
    'API / reference': share(api, reference),
    'baseline / reference': share(baseline, reference),
    'API / baseline': share(api, baseline),
    'server CPU ms per call, API / baseline / reference': api
      ? `${cpu(api)} / ${cpu(baseline)} / ${cpu(reference)}`
      : '',
  };
}
