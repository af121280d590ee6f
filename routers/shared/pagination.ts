import { z } from 'zod';
import { integerParam, withDefault } from './params';

export const MAX_LIMIT = 100;

/** `page` and `limit` of every list (D-11): page ≥ 1, limit 1..100, anything else is 400. */
export const pageParams = {
  page: withDefault(integerParam(1, Number.MAX_SAFE_INTEGER), 1).describe('Page number, from 1. Default 1.'),
  limit: withDefault(integerParam(1, MAX_LIMIT), 20).describe('Items per page, 1 to 100. Default 20.'),
};

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    page: z.number().int().describe('The page returned.'),
    limit: z.number().int().describe('The page size asked for.'),
    has_next: z.boolean().describe('Whether a further page has at least one item.'),
  });
}
