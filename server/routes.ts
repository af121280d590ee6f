import type { PartnerErrorCode } from './errors';

type ProcedureMeta = { openapi?: { method: string; path: string }; partnerErrors?: PartnerErrorCode[] };
type RouterLike = { _def: { procedures: Record<string, unknown> } };

/**
 * A REST route of the API as the router's meta declares it (routers/shared/meta.ts): its procedure's path on
 * the router (`reviews.list`), and a pattern whose named groups are its path parameters.
 */
export type RestRoute = { procedure: string; path: string; pattern: RegExp; partnerErrors: PartnerErrorCode[] };

/**
 * The REST routes of a router, each with an exact pattern: case-sensitive, no trailing slash, a `{param}`
 * one path segment. trpc-to-openapi itself matches paths ignoring case and a trailing slash; the REST door
 * holds requests to these patterns so that any other spelling is a wrong path (404, partner guide § Errors).
 */
export function restRoutes(router: RouterLike): RestRoute[] {
  return Object.entries(router._def.procedures).flatMap(([name, procedure]) => {
    const meta = (procedure as { _def: { meta?: ProcedureMeta } })._def.meta;
    if (!meta?.openapi) return [];
    const source = meta.openapi.path
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\{(\w+)\}/g, (_, parameter: string) => `(?<${parameter}>[^/]+)`);
    return [
      {
        procedure: name,
        path: meta.openapi.path,
        pattern: new RegExp(`^${source}$`),
        partnerErrors: meta.partnerErrors ?? [],
      },
    ];
  });
}
