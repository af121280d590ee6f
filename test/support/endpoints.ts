import { z } from 'zod';
import { DEMO_KEYS } from '../../db/seed/demo';
import { appRouter, type createCaller } from '../../routers';
import type { Services } from '../../server/trpc/services';
import { callerFor } from './services';

type Caller = ReturnType<typeof createCaller>;
type Procedure = {
  _def: { meta?: { openapi?: { method: string; path: string } }; inputs: unknown[] };
};
type Call = (input: Record<string, string>) => Promise<unknown>;

export const DEMO_BRAND = 'chicken-house';
export const DEMO_USER = 'u-ch-001';

/** Path parameters the suites fill without reading anything: the brand is what a test asks for. */
const GIVEN = new Set(['brand_code']);

/**
 * Every operation of the router, as both transports reach it, read from the router itself
 * (`appRouter._def.procedures` and their `meta.openapi`): a procedure added to the router is in every
 * suite that iterates these, with nothing else to edit.
 *
 * `path(brand)` and `call(caller, brand)` fill the REST path parameters: `brand_code` is the brand asked
 * for; any other parameter `{x}` at the end of a path segment list is sampled from the data, as the first
 * item's `x` of the list operation one segment up (users → `user_code` of the first user, reviews →
 * `review_id` of the newest review), read through the API by `loadSamples`. A parameter that cannot be
 * sampled that way fails when this module loads, so no operation is ever left out silently.
 */
export type Endpoint = {
  /** The procedure's path on the router and on createCaller, e.g. `users.get`. */
  name: string;
  /** The REST path template, e.g. `/partner/v1/brands/{brand_code}/users/{user_code}`. */
  route: string;
  /** The names of the procedure's input (path and query parameters). */
  parameters: string[];
  /** Whether the path names a brand: such an operation answers 404 for a brand outside the key's scope. */
  brandScoped: boolean;
  /**
   * The REST path for `brand`, with the other parameters sampled from `samplesOf` (by default the same
   * brand; a brand no key may read, or a missing one, borrows the samples of another).
   */
  path(brand: string, samplesOf?: string): string;
  /**
   * The same operation with the same parameters, through anything shaped like the router: a createCaller
   * caller, or the SDK's client. The procedure is found by its path (`users.get` → `client.users.get`).
   * `query` adds parameters beside the path's.
   */
  call(
    client: Caller | object,
    brand: string,
    samplesOf?: string,
    query?: Record<string, string | number>,
  ): Promise<unknown>;
};

const procedures = appRouter._def.procedures as unknown as Record<string, Procedure>;

/** The parameter names a procedure's input declares, as its JSON Schema (what the OpenAPI document shows) lists them. */
function parametersOf(name: string, procedure: Procedure): string[] {
  const [input, ...more] = procedure._def.inputs;
  if (input === undefined) return [];
  if (more.length || !(input instanceof z.ZodType)) {
    throw new Error(`test/support/endpoints.ts reads one zod input per procedure; ${name} has another`);
  }
  const schema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as { properties?: object };
  if (!schema.properties) throw new Error(`${name}'s input is not an object of parameters`);
  return Object.keys(schema.properties);
}

const routeOf = new Map<string, string>();
for (const [name, procedure] of Object.entries(procedures)) {
  const openapi = procedure._def.meta?.openapi;
  if (!openapi) throw new Error(`${name} has no meta.openapi: every procedure of the router is a REST operation`);
  if (openapi.method !== 'GET') throw new Error(`${name} is ${openapi.method}: the suites read with GET only`);
  routeOf.set(openapi.path, name);
}

/** `{x}` of a REST path, in order. */
const pathParameters = (route: string) => [...route.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);

/**
 * Where each sampled parameter comes from: the list whose route is the path up to `/{x}`, whose items
 * carry `x`. Checked for every operation when the module loads.
 */
function sourceOf(route: string, parameter: string): string {
  const at = route.indexOf(`/{${parameter}}`);
  const list = route.slice(0, at);
  const name = routeOf.get(list);
  if (!name) {
    throw new Error(
      `test/support/endpoints.ts cannot sample {${parameter}} of ${route}: no list operation at ${list} ` +
        'to read it from. Teach the sampling here how to read it; no operation is left out of the suites.',
    );
  }
  return name;
}

const resolve = (client: object, name: string): Call => {
  let target: unknown = client;
  for (const part of name.split('.')) target = (target as Record<string, unknown>)[part];
  if (typeof target !== 'function') throw new Error(`the client has no procedure ${name}`);
  return target as Call;
};

/** Sampled parameters by brand, then by name; filled by loadSamples before the suites run. */
const SAMPLES = new Map<string, Map<string, string>>();

function parametersFor(route: string, brand: string, samplesOf: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const parameter of pathParameters(route)) {
    if (parameter === 'brand_code') {
      values[parameter] = brand;
      continue;
    }
    const value = SAMPLES.get(samplesOf)?.get(`${sourceOf(route, parameter)} ${parameter}`);
    if (value === undefined) {
      throw new Error(
        `no sample of {${parameter}} in brand ${samplesOf}: loadSamples(services) not called in beforeAll, ` +
          `or ${sourceOf(route, parameter)} has no item there carrying ${parameter}`,
      );
    }
    values[parameter] = value;
  }
  return values;
}

export const ENDPOINTS: Endpoint[] = Object.entries(procedures).map(([name, procedure]) => {
  const route = procedure._def.meta?.openapi?.path as string;
  for (const parameter of pathParameters(route)) if (!GIVEN.has(parameter)) sourceOf(route, parameter);
  return {
    name,
    route,
    parameters: parametersOf(name, procedure),
    brandScoped: pathParameters(route).includes('brand_code'),
    path: (brand, samplesOf = brand) => {
      const values = parametersFor(route, brand, samplesOf);
      return route.replace(/\{(\w+)\}/g, (_, parameter: string) => encodeURIComponent(values[parameter] as string));
    },
    call: (client, brand, samplesOf = brand, query = {}) =>
      resolve(client, name)({ ...query, ...parametersFor(route, brand, samplesOf) } as Record<string, string>),
  };
});

/** The operations whose input declares every one of `parameters` (e.g. the page-numbered lists). */
export const endpointsWith = (...parameters: string[]) =>
  ENDPOINTS.filter((endpoint) => parameters.every((parameter) => endpoint.parameters.includes(parameter)));

/**
 * Reads the samples of every brand the demo keys may read, through the API as a partner would: for
 * each sampled parameter, the first item of its list (lists are in their documented order, so reviews
 * give the newest review). A brand whose list is empty, or whose items lack the parameter, has no sample,
 * and a test asking for one fails.
 */
export async function loadSamples(services: Services) {
  // Files of a worker share this module: each reads the samples of its own database.
  SAMPLES.clear();
  const needed = ENDPOINTS.flatMap((endpoint) =>
    pathParameters(endpoint.route)
      .filter((parameter) => !GIVEN.has(parameter))
      .map((parameter) => ({ route: endpoint.route, parameter, list: sourceOf(endpoint.route, parameter) })),
  );
  for (const key of [DEMO_KEYS.active, DEMO_KEYS.other]) {
    const caller = callerFor(services, key);
    const brands = (await caller.brands.list({ limit: 100 })).data.items.map((brand) => brand.brand_code);
    for (const brand of brands) {
      const samples = SAMPLES.get(brand) ?? new Map<string, string>();
      SAMPLES.set(brand, samples);
      // Shorter routes first, so a nested list finds the samples of its own parameters.
      for (const { route, parameter, list } of needed.sort((a, b) => a.route.length - b.route.length)) {
        const slot = `${list} ${parameter}`;
        if (samples.has(slot)) continue;
        const listRoute = route.slice(0, route.indexOf(`/{${parameter}}`));
        const answer = (await resolve(caller, list)(parametersFor(listRoute, brand, brand))) as {
          data: { items: Record<string, unknown>[] };
        };
        const value = answer.data.items[0]?.[parameter];
        // A brand whose list is empty has no sample: a test that needs one fails in parametersFor.
        if (typeof value === 'string') samples.set(slot, value);
      }
    }
  }
}
