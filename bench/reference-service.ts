import http from 'node:http';
import postgres from 'postgres';
import { addDays, kstDayStart } from '../db/kst';
import { likePattern } from '../db/queries/reviews/rules';

// The hand-written peer of the API in bench:http (bench/reference.ts starts it): bare node:http and
// postgres.js answering GET /partner/v1/brands/{brand_code}/reviews with the API's own statement texts
// (reviewListQuery's, handed over by the bench, prepared as postgres.js does by default), the same envelope,
// fields and JSON. The key and the brands come from memory; no limiter, no access log, no validation
// beyond what picks the statement. What the API costs beyond it is the price of its layers.
//
// Environment: DATABASE_URL, PORT, REFERENCE (JSON of ReferenceConfig, bench/reference.ts).

type Config = {
  key: string;
  /** brand_code → brand row id, for the key's partner. */
  brands: Record<string, { id: number; min: number; max: number }>;
  /** statementShape(...) → the statement text, `$n` placeholders in reviewListQuery's order. */
  statements: Record<string, string>;
};

/** The filters the reference answers, in the order filterConditions (db/queries/reviews) binds them. */
const FILTERS = ['from', 'to', 'platform', 'keyword'] as const;
const PLATFORMS = new Set(['BAEMIN', 'CPEATS', 'YOGIYO', 'DDANGYO', 'NAVER', 'MUKKEBI']);
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const PATH = /^\/partner\/v1\/brands\/([A-Za-z0-9_.~-]+)\/reviews$/;

/**
 * Which statement text a request runs: its filters, its page size, whether it skips rows, and for a keyword
 * whether it is short (one or two characters: the statement also looks it up by the brand's grams of it, two
 * more values).
 */
export function statementShape(filters: readonly string[], limit: number, offset: boolean, keyword?: string): string {
  const keywordClass = keyword === undefined ? '' : [...keyword].length < 3 ? 'short' : 'long';
  return `${[...filters].sort().join(',')}|${limit}|${offset ? 'offset' : ''}|${keywordClass}`;
}

/** A row of the statement, by position (its critical column has no name), as drizzle reads it too. */
type Row = [
  reviewCode: string,
  platformShopId: string,
  shopName: string,
  platform: string,
  /** KST timestamp text: the statement formats it (db/kst.ts kstTimestampOf). */
  date: string,
  content: string,
  rating: number | null,
  menus: string[] | null,
  isReplied: boolean,
  replyContent: string | null,
  replyDate: string | null,
  critical: boolean,
  isHandled: boolean,
];

function serve(config: Config, databaseUrl: string, port: number) {
  const sql = postgres(databaseUrl, { max: 10, onnotice: () => {}, connection: { TimeZone: 'UTC' } });
  const fail = (res: http.ServerResponse, status: number) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'ERROR', status_code: status, message: 'refused' }));
  };
  http
    .createServer(async (req, res) => {
      if (req.url === '/healthz') return res.end('ok');
      if (req.method !== 'GET' || req.headers['x-partner-api-key'] !== config.key) return fail(res, 401);
      const at = req.url?.indexOf('?') ?? -1;
      const path = at < 0 ? (req.url ?? '') : req.url?.slice(0, at);
      const brand = config.brands[PATH.exec(path ?? '')?.[1] ?? ''];
      if (brand === undefined) return fail(res, 404);
      const brandId = brand.id;
      const query = new URLSearchParams(at < 0 ? '' : req.url?.slice(at + 1));
      const page = Number(query.get('page') ?? 1);
      const limit = Number(query.get('limit') ?? 20);
      if (!Number.isInteger(page) || page < 1 || !Number.isInteger(limit) || limit < 1 || limit > 100)
        return fail(res, 400);
      const from = query.get('from');
      const to = query.get('to');
      const platform = query.get('platform');
      const keyword = query.get('keyword');
      if ((from && !DAY.test(from)) || (to && !DAY.test(to)) || (platform && !PLATFORMS.has(platform)))
        return fail(res, 400);
      const present = FILTERS.filter((name) => query.has(name));
      const text = config.statements[statementShape(present, limit + 1, page > 1, keyword ?? undefined)];
      if (!text) return fail(res, 400);
      // The critical range's two bounds (held in memory, as the API's brand cache holds them) and the brand,
      // then each filter's values, then the offset.
      const params: (string | number)[] = [brand.min, brand.max, brandId];
      if (from) params.push(kstDayStart(from).toISOString());
      if (to) params.push(kstDayStart(addDays(to, 1)).toISOString());
      if (platform) params.push(platform);
      if (keyword) {
        const pattern = likePattern(keyword);
        if ([...keyword].length < 3) params.push(brandId, keyword);
        params.push(pattern, pattern, pattern);
      }
      if (page > 1) params.push((page - 1) * limit);
      try {
        // A keyword's plan depends on its value: planned per call, as the API does (db/queries/reviews).
        const rows = (await sql.unsafe(text, params, { prepare: !keyword }).values()) as unknown as Row[];
        const items = rows
          .slice(0, limit)
          .map(
            ([
              id,
              shopId,
              shopName,
              platform,
              date,
              content,
              rating,
              menus,
              replied,
              reply,
              replyDate,
              critical,
              handled,
            ]) => ({
              review_id: id,
              platform_shop_id: shopId,
              shop_name: shopName,
              platform,
              date,
              content,
              rating,
              menus: menus?.length ? menus : null,
              reply_status: replied ? 'REPLIED' : 'NOT_REPLIED',
              reply_content: replied ? reply : null,
              reply_date: replied ? replyDate : null,
              is_critical: critical,
              is_handled: handled,
            }),
          );
        const body = JSON.stringify({
          status: 'SUCCESS',
          status_code: 200,
          message: 'OK',
          data: { items, page, limit, has_next: rows.length > limit },
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      } catch (error) {
        // The bench compares answers: a failure says why on stderr.
        console.error('reference service:', error);
        fail(res, 500);
      }
    })
    .listen(port, '127.0.0.1');
}

if (process.env.REFERENCE) {
  serve(JSON.parse(process.env.REFERENCE) as Config, String(process.env.DATABASE_URL), Number(process.env.PORT));
}
