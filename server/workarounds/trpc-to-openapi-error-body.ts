import type { ServerResponse } from 'node:http';

/**
 * Defect: trpc-to-openapi's handler writes every error as `{ ...errorShape, message, code, issues }`. The
 * error formatter can add keys to that body but not remove them, so a REST error would carry tRPC's code
 * and, for a parameter that broke its rule, zod's issues, which quote what was sent
 * (mcampa/trpc-to-openapi#168, jlalmes/trpc-openapi#440).
 *
 * Workaround: installed from the adapter's onError (server/app.ts), so only on an error, the body the
 * handler writes is replaced by the partner envelope the error formatter put under `data.partner`
 * (server/trpc.ts), exactly the body of D-12.
 *
 * Remove when: the adapter sends the formatter's shape as the body, or takes a hook to shape it;
 * test/http.test.ts "error bodies on REST" shows the body.
 */
export const writtenFor = { dependency: 'trpc-to-openapi', version: '3.3.0' } as const;

/** Makes the error body the handler writes on `res` the formatter's partner envelope. */
export function partnerErrorBody(res: ServerResponse): void {
  const end = res.end.bind(res) as (body?: unknown) => ServerResponse;
  res.end = ((body?: unknown) => {
    if (res.statusCode < 400 || typeof body !== 'string') return end(body);
    const shape = JSON.parse(body) as { data: { partner: unknown } };
    return end(JSON.stringify(shape.data.partner));
  }) as ServerResponse['end'];
}
