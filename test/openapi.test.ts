import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../server/errors';
import { openApiDocument } from '../server/openapi';

// D-15: the document is generated from the router, valid OpenAPI 3, and documents the envelope and errors.
describe('OpenAPI document', () => {
  const document = openApiDocument();

  it('is a valid OpenAPI 3 document', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('documents every GET path of the API under /partner/v1, protected by the key header', () => {
    const paths = Object.keys(document.paths ?? {});
    expect(paths.length).toBeGreaterThanOrEqual(6);
    for (const path of paths) {
      expect(path.startsWith('/partner/v1/')).toBe(true);
      const item = document.paths?.[path] as Record<string, { security?: unknown; summary?: string }>;
      expect(Object.keys(item)).toEqual(['get']);
      expect(item.get?.security).toEqual([{ partnerApiKey: [] }]);
      expect(item.get?.summary).toBeTruthy();
    }
  });

  it('describes errors only as the partner envelope, with an example for each code', () => {
    expect(Object.keys(document.components?.schemas ?? {}).filter((name) => name.startsWith('error.'))).toEqual([]);
    for (const item of Object.values(document.paths ?? {})) {
      const responses = (
        item as {
          get: { responses: Record<string, { content: Record<string, { schema: unknown; examples: object }> }> };
        }
      ).get.responses;
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        const json = response.content['application/json'];
        expect(json?.schema).toEqual({ $ref: '#/components/schemas/PartnerError' });
        for (const code of Object.keys(json?.examples ?? {})) {
          expect(ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].httpStatus).toBe(Number(status));
        }
      }
      expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '401', '403', '429', '500']));
    }
  });
});
