import type { ServerResponse } from 'node:http';

/**
 * Defect: trpc-to-openapi adds tRPC's code and zod's issues, which quote what was sent, to every error body
 * (mcampa/trpc-to-openapi#168). Workaround: from onError, the body becomes the envelope under `data.partner`.
 * Remove when: the adapter sends the formatter's shape; test/http.test.ts "error bodies on REST" shows the body.
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
