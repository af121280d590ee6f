import type { PartnerErrorCode } from '../trpc/errors';

type ProcedureMeta = { openapi?: { method: string; path: string }; partnerErrors?: PartnerErrorCode[] };
type RouterLike = { _def: { procedures: Record<string, unknown> } };

/** The REST routes, each an exact pattern (D-12): a `{param}` is one segment, not `.` or `..`, no backslash. */
export function restRoutes(router: RouterLike) {
  return Object.values(router._def.procedures).flatMap((procedure) => {
    const meta = (procedure as { _def: { meta?: ProcedureMeta } })._def.meta;
    if (!meta?.openapi) return [];
    const source = meta.openapi.path
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\{(\w+)\}/g, (_, parameter: string) => `(?<${parameter}>(?!\\.\\.?(?:/|$))[^/\\\\]+)`);
    return [{ path: meta.openapi.path, pattern: new RegExp(`^${source}$`), partnerErrors: meta.partnerErrors ?? [] }];
  });
}
