// What the generators share: KST time helpers relative to `now`, bulk inserts, and the review body
// generator (Korean text from a small vocabulary, ratings, menus, replies, alerts) used by both the demo set
// (demo.ts) and the benchmark set (large.ts).
import { getTableColumns, getTableName, sql } from 'drizzle-orm';
import type { PgColumn, PgInsertValue, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../client';
import { kstDayStart } from '../kst';
import type { platformEnum, replyStateEnum, reviews } from '../schema';
import type { Random } from './random';

export type NewReview = typeof reviews.$inferInsert;
export type Platform = (typeof platformEnum.enumValues)[number];
export type ReplyState = (typeof replyStateEnum.enumValues)[number];

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

// ---------------------------------------------------------------------------------------------------------
// Time (D-5: every calendar rule in KST)

/** The instant `HH:MM:SS` KST on `day`. */
export function atKst(day: string, time: string): Date {
  const [h = 0, m = 0, s = 0] = time.split(':').map(Number);
  return new Date(kstDayStart(day).getTime() + ((h * 60 + m) * 60 + s) * SECOND_MS);
}

export function addMs(instant: Date, ms: number): Date {
  return new Date(instant.getTime() + ms);
}

/** Generated timestamps never lie in the future of the data set's `now`. */
export function notAfter(instant: Date, now: Date): Date {
  return instant.getTime() > now.getTime() ? now : instant;
}

/** Whole seconds: the API prints seconds, so sub-second parts would only make ties look unequal. */
export function floorToSecond(instant: Date): Date {
  return new Date(Math.floor(instant.getTime() / SECOND_MS) * SECOND_MS);
}

/** Day of the week of a `YYYY-MM-DD` day, 0 = Sunday. */
export function weekdayOf(day: string): number {
  return new Date(`${day}T00:00:00Z`).getUTCDay();
}

/** Orders and sales peak on Friday to Sunday. */
export function weekdayFactor(day: string): number {
  return [1.25, 0.85, 0.85, 0.9, 0.95, 1.2, 1.3][weekdayOf(day)] ?? 1;
}

/** Seconds after midnight of a plausible order time: lunch and dinner peaks, a few late-night orders. */
export function orderSecondOfDay(rand: Random): number {
  const hour = rand.weighted<number>([
    [0, 2],
    [1, 1],
    [2, 0.5],
    [3, 0.3],
    [4, 0.2],
    [5, 0.2],
    [6, 0.3],
    [7, 0.5],
    [8, 0.8],
    [9, 1],
    [10, 2],
    [11, 6],
    [12, 8],
    [13, 5],
    [14, 3],
    [15, 2.5],
    [16, 3],
    [17, 6],
    [18, 10],
    [19, 11],
    [20, 9],
    [21, 7],
    [22, 5],
    [23, 3.5],
  ]);
  return hour * 3600 + rand.int(0, 3599);
}

// ---------------------------------------------------------------------------------------------------------
// Bulk inserts

/**
 * Inserts `rows` as one statement per chunk with a single JSON parameter, expanded by
 * json_populate_recordset. Every value goes in as drizzle's insert would send it (the column's driver
 * value, read by the column type's input function), but without drizzle building, and the driver binding,
 * one parameter per value: for the demo set's thousands of reviews that was most of the seed's time on
 * PGlite. Every row must set the same columns (a column a row leaves out would be NULL, not its default).
 */
export async function insertRows<TTable extends PgTable>(
  db: Db,
  table: TTable,
  rows: readonly PgInsertValue<TTable>[],
  chunkSize = 5000,
): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const columns = getTableColumns(table) as Record<string, PgColumn>;
  const keys = Object.keys(first).filter((key) => (first as Record<string, unknown>)[key] !== undefined);
  const targets = keys.map((key) => {
    const column = columns[key];
    if (!column) throw new Error(`insertRows: ${key} is not a column of ${getTableName(table)}`);
    return column;
  });
  const names = sql.join(
    targets.map((column) => sql.identifier(column.name)),
    sql`, `,
  );
  for (let start = 0; start < rows.length; start += chunkSize) {
    const chunk = rows.slice(start, start + chunkSize).map((row) => {
      const values = row as Record<string, unknown>;
      if (Object.keys(values).filter((key) => values[key] !== undefined).length !== keys.length)
        throw new Error(`insertRows: the rows of ${getTableName(table)} do not all set the same columns`);
      const out: Record<string, unknown> = {};
      targets.forEach((column, index) => {
        const value = values[keys[index] as string];
        if (value === undefined) throw new Error(`insertRows: a row of ${getTableName(table)} lacks ${column.name}`);
        out[column.name] = value === null ? null : column.mapToDriverValue(value);
      });
      return out;
    });
    await db.execute(
      sql`INSERT INTO ${table} (${names}) SELECT ${names} FROM json_populate_recordset(NULL::${table}, ${JSON.stringify(chunk)}::json)`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Review text

/** Per-brand words: `food` fills the templates, `menus` are the brand's ordered menu names. */
export type Vocabulary = { food: string; menus: readonly string[] };

export type Sentiment = 'positive' | 'neutral' | 'negative';

// No phrase of any pool contains '마라': in the chicken brands it is found only in the menu '마라치킨'
// (the D-3 "keyword hits found only in menus" case). Tests rely on that; keep it so when editing.
const PHRASES: Record<Sentiment, readonly string[]> = {
  positive: [
    '{food} 정말 맛있어요',
    '바삭바삭하고 속은 촉촉해요',
    '배달이 빨라서 따뜻하게 먹었어요',
    '양이 푸짐해요',
    '재주문 의사 있습니다',
    '소스가 최고예요',
    '포장이 깔끔했어요',
    '아이들이 너무 좋아해요',
    '사장님 서비스 감사합니다',
    '역시 믿고 먹는 {food}',
    '이 동네 {food} 맛집 인정합니다',
    '가성비 좋아요',
    '요청사항 꼼꼼하게 들어주셨어요',
    '언제 먹어도 맛있네요',
  ],
  neutral: [
    '무난해요',
    '평범한 맛이에요',
    '조금 식어서 왔어요',
    '양은 괜찮은데 간이 좀 셌어요',
    '가격 대비 보통이에요',
    '1000원 더 비싸졌네요',
    '배달이 조금 늦었지만 맛은 괜찮아요',
    '예전보다 양이 줄어든 것 같아요',
    '그럭저럭 먹을 만해요',
  ],
  negative: [
    '너무 늦게 왔어요',
    '눅눅해서 실망했어요',
    '주문한 메뉴가 빠져서 왔어요',
    '기름 냄새가 심해요',
    '다시는 안 시킬 것 같아요',
    '포장이 터져서 왔어요',
    '너무 짜서 못 먹겠어요',
    '머리카락이 나왔어요',
    '요청사항을 전혀 안 들어주셨네요',
    '{food} 식어서 딱딱했어요',
  ],
};

// Rare phrases for the keyword rules (D-8): literal '%', '_' and '\', mixed-case ASCII, and decoys that a
// LIKE-wildcard bug would wrongly match ('1000원' for '100%', 'axb' for 'a_b').
const SPECIAL_PHRASES: Record<Sentiment, readonly string[]> = {
  positive: ['100% 만족합니다', 'Crispy 그 자체!', '완전 CRISPY 해요', 'crispy crispy 👍', '맛\\양 둘 다 만족'],
  neutral: ['a_b 세트 시켰는데 괜찮아요', 'axb 쿠폰 썼어요', '1000원 할인 받아서 시켰어요'],
  negative: ['crispy 하다더니 눅눅했어요', '100% 환불 요청합니다'],
};

const REPLIES: Record<'POSTED' | 'OWNER_DIRECT', Record<Sentiment, readonly string[]>> = {
  POSTED: {
    positive: [
      '소중한 리뷰 감사합니다! 다음에도 맛있게 준비하겠습니다.',
      '맛있게 드셔주셔서 감사해요. 또 찾아주세요!',
      '좋은 말씀 감사합니다. 늘 같은 맛으로 보답하겠습니다.',
    ],
    neutral: [
      '의견 감사합니다. 더 만족하실 수 있도록 노력하겠습니다.',
      '말씀해주신 부분 참고해서 개선하겠습니다. 감사합니다.',
    ],
    negative: [
      '불편을 드려 정말 죄송합니다. 말씀해주신 부분 꼭 개선하겠습니다.',
      '기대에 못 미쳐 죄송합니다. 매장에서 다시 한번 점검하겠습니다.',
    ],
  },
  OWNER_DIRECT: {
    positive: ['사장입니다~ 또 주문해주세요 ^^', '직접 인사드려요. 맛있게 드셔주셔서 고맙습니다!'],
    neutral: ['사장입니다. 다음엔 더 맛있게 보내드릴게요.'],
    negative: ['사장이 직접 답글 남깁니다. 정말 죄송합니다, 다음 주문 때 꼭 챙겨드릴게요.'],
  },
};

const RATINGS: readonly (readonly [number | null, number])[] = [
  [5, 44],
  [4.5, 8],
  [4, 14],
  [3.5, 4],
  [3, 7],
  [2.5, 2.5],
  [2, 5],
  [1.5, 2],
  [1, 6],
  [0.5, 2],
  [null, 5.5],
];

const REPLY_STATES_SETTLED: readonly (readonly [ReplyState, number])[] = [
  ['NONE', 34],
  ['POSTED', 38],
  ['OWNER_DIRECT', 12],
  ['SCHEDULED', 6],
  ['FAILED', 10],
];

/** Reviews of the last day are mostly still unanswered. */
const REPLY_STATES_FRESH: readonly (readonly [ReplyState, number])[] = [
  ['NONE', 70],
  ['POSTED', 15],
  ['OWNER_DIRECT', 5],
  ['SCHEDULED', 8],
  ['FAILED', 2],
];

/** Inclusive star range of a brand (brands.critical_star_min/max). */
export type CriticalRange = readonly [min: number, max: number];

/** Same rule as the generated `star_bucket` column: rounded down, 0.5 as 1, no rating as 0 (D-7). */
export function starBucketOf(rating: number | null | undefined): number {
  if (rating === null || rating === undefined) return 0;
  return rating < 1 ? 1 : Math.floor(rating);
}

/** is_critical (D-7), as the API computes it; the generator uses it only to decide who gets alerts. */
export function isCritical(rating: number | null | undefined, aiNegative: boolean, range: CriticalRange): boolean {
  const bucket = starBucketOf(rating);
  return aiNegative || (bucket >= range[0] && bucket <= range[1]);
}

export function fillFood(text: string, vocabulary: Vocabulary): string {
  return text.replaceAll('{food}', vocabulary.food);
}

export function composeContent(rand: Random, sentiment: Sentiment, vocabulary: Vocabulary): string {
  const phrases = rand.sample(PHRASES[sentiment], rand.int(1, 3));
  if (rand.chance(0.03)) phrases.splice(rand.int(0, phrases.length), 0, rand.pick(SPECIAL_PHRASES[sentiment]));
  return fillFood(phrases.join(rand.chance(0.5) ? ' ' : '. '), vocabulary);
}

export type ReplyFields = Pick<NewReview, 'replyState' | 'replyContent' | 'replyAt'>;

/**
 * Reply columns for a state. Every state but NONE stores a text: SCHEDULED and FAILED keep theirs too, and
 * the API must hide it (D-7). `reply_at` lies after `written_at` and never after `now`; for SCHEDULED it is
 * the planned time, for FAILED the failed attempt.
 */
export function replyFor(
  rand: Random,
  state: ReplyState,
  sentiment: Sentiment,
  writtenAt: Date,
  now: Date,
  delayMs: number,
): ReplyFields {
  if (state === 'NONE') return { replyState: 'NONE', replyContent: null, replyAt: null };
  const texts = state === 'OWNER_DIRECT' ? REPLIES.OWNER_DIRECT : REPLIES.POSTED;
  return {
    replyState: state,
    replyContent: rand.pick(texts[sentiment]),
    replyAt: floorToSecond(notAfter(addMs(writtenAt, Math.max(delayMs, SECOND_MS)), now)),
  };
}

export type ReviewBody = Pick<
  NewReview,
  | 'content'
  | 'rating'
  | 'menus'
  | 'aiNegative'
  | 'replyState'
  | 'replyContent'
  | 'replyAt'
  | 'alertSentAt'
  | 'createdAt'
>;

export type ReviewContext = {
  writtenAt: Date;
  now: Date;
  vocabulary: Vocabulary;
  criticalRange: CriticalRange;
  /** The shop has an enabled alert number, so a critical review may have triggered an alert. */
  alertable: boolean;
};

/** Everything of a review but its identity (code, brand, shop) and `written_at`. */
export function generateReviewBody(rand: Random, context: ReviewContext): ReviewBody {
  const { writtenAt, now, vocabulary, criticalRange, alertable } = context;
  const ageMs = now.getTime() - writtenAt.getTime();

  const rating = rand.weighted(RATINGS);
  const sentiment: Sentiment =
    rating === null
      ? rand.weighted<Sentiment>([
          ['positive', 5],
          ['neutral', 2],
          ['negative', 3],
        ])
      : rating >= 4
        ? // A few high ratings come with a complaint: critical by AI judgement alone (D-7).
          rand.chance(rating === 5 ? 0.03 : 0.02)
          ? 'negative'
          : 'positive'
        : rating >= 2.5
          ? rand.weighted<Sentiment>([
              ['neutral', 7],
              ['negative', 2],
              ['positive', 1],
            ])
          : 'negative';
  // Star-only reviews need a rating: a review with neither is not something a platform collects.
  const starOnly = rating !== null && rand.chance(0.08);
  const content = starOnly ? '' : composeContent(rand, sentiment, vocabulary);
  const aiNegative =
    !starOnly && (sentiment === 'negative' ? rand.chance(0.9) : sentiment === 'neutral' && rand.chance(0.12));
  // Menus are null in about a third of the reviews (never an empty array, D-7).
  const menus = rand.chance(0.35)
    ? null
    : rand.sample(
        vocabulary.menus,
        rand.weighted([
          [1, 6],
          [2, 3],
          [3, 1],
        ]),
      );

  // A reply needs time to be written; the newest reviews stay unanswered.
  const state =
    ageMs < 2 * MINUTE_MS ? 'NONE' : rand.weighted(ageMs < DAY_MS ? REPLY_STATES_FRESH : REPLY_STATES_SETTLED);
  const reply = replyFor(rand, state, sentiment, writtenAt, now, rand.int(10 * MINUTE_MS, 48 * HOUR_MS));

  // Alerts go out for critical reviews of shops with an enabled number, replied or not: the unreplied ones
  // with an alert are the "handled but not replied" case (D-7 is_handled).
  const alerted = alertable && isCritical(rating, aiNegative, criticalRange) && rand.chance(0.6);
  const alertSentAt = alerted
    ? floorToSecond(notAfter(addMs(writtenAt, rand.int(1 * MINUTE_MS, 30 * MINUTE_MS)), now))
    : null;

  // Collected a little after it was written (reviews are not visible at once).
  const createdAt = notAfter(addMs(writtenAt, rand.int(5 * MINUTE_MS, 90 * MINUTE_MS)), now);

  return { content, rating, menus, aiNegative, ...reply, alertSentAt, createdAt };
}

/** A deterministic daily sales amount in won: shop base × weekday × noise, 50,000–2,500,000, to 100 won. */
export function salesAmount(rand: Random, base: number, day: string): number {
  const raw = base * weekdayFactor(day) * rand.float(0.7, 1.3);
  return Math.round(Math.min(2_500_000, Math.max(50_000, raw)) / 100) * 100;
}
