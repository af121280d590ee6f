import { z } from 'zod';
import { integerParam, withDefault } from './params';

/** The largest page size (partner guide § Pages). */
export const MAX_LIMIT = 100;

/**
 * `page` and `limit` of every list (partner guide § Pages, D-11): page ≥ 1, limit 1..100, anything else is 400.
 * Spread into an operation's parameters.
 */
export const pageParams = {
  page: withDefault(integerParam(1, Number.MAX_SAFE_INTEGER), 1).describe('Page number, from 1. Default 1.'),
  limit: withDefault(integerParam(1, MAX_LIMIT), 20).describe('Items per page, 1 to 100. Default 20.'),
};

/** The `data` of every list: items, page, limit, has_next (partner guide § Responses). */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    page: z.number().int().describe('The page returned.'),
    limit: z.number().int().describe('The page size asked for.'),
    has_next: z.boolean().describe('Whether a further page has at least one item.'),
  });
}
