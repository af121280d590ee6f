import { and, desc, eq, isNull, like, max } from 'drizzle-orm';
import type { Db } from '../client';
import { brands, reviews, shops } from '../schema';

/** What `makeDemoChanges` did, by review_id, for the person watching the change feed. */
export type DemoChanges = { replied: string; alerted: string; added: string; critical: string; removed: string };

/**
 * One change of each kind the review change feed sends (partner guide § Keeping a copy in sync), in
 * `chicken-house`: a late reply, a negative-review alert, a new review, a new critical one (1 star: what a
 * webhook's alerting waits for, D-28) and a removed one.
 */
export async function makeDemoChanges(db: Db, now = new Date()): Promise<DemoChanges> {
  return db.transaction(async (tx) => {
    const [brand] = await tx.select({ id: brands.id }).from(brands).where(eq(brands.brandCode, 'chicken-house'));
    if (!brand) throw new Error('chicken-house is missing: load the demo data first (npm run db:seed)');
    const unanswered = and(eq(reviews.brandId, brand.id), eq(reviews.replyState, 'NONE'), isNull(reviews.alertSentAt));
    const [toReply, toAlert] = await tx
      .select({ id: reviews.id, code: reviews.reviewCode })
      .from(reviews)
      .where(unanswered)
      .orderBy(desc(reviews.writtenAt))
      .limit(2);
    // The newest reviews change, never the oldest: the README and the guides show R000000001 as the example.
    const newest = await tx
      .select({ id: reviews.id, code: reviews.reviewCode })
      .from(reviews)
      .where(eq(reviews.brandId, brand.id))
      .orderBy(desc(reviews.writtenAt), desc(reviews.reviewCode))
      .limit(3);
    const toRemove = newest.find((review) => review.id !== toReply?.id && review.id !== toAlert?.id);
    const [shop] = await tx.select({ id: shops.id }).from(shops).where(eq(shops.brandId, brand.id)).limit(1);
    if (!toReply || !toAlert || !toRemove || !shop) throw new Error('chicken-house has too few reviews left');

    await tx
      .update(reviews)
      .set({ replyState: 'POSTED', replyContent: '찾아주셔서 감사합니다! 다음에도 맛있게 준비할게요.', replyAt: now })
      .where(eq(reviews.id, toReply.id));
    await tx.update(reviews).set({ alertSentAt: now }).where(eq(reviews.id, toAlert.id));
    // The next code of the demo's fixed-width kind, so text order stays age order (D-9).
    const [last] = await tx
      .select({ code: max(reviews.reviewCode) })
      .from(reviews)
      .where(like(reviews.reviewCode, 'R%'));
    const added = `R${String(Number(last?.code?.slice(1) ?? 0) + 1).padStart(9, '0')}`;
    await tx.insert(reviews).values({
      reviewCode: added,
      brandId: brand.id,
      shopId: shop.id,
      writtenAt: new Date(Math.floor(now.getTime() / 1000) * 1000),
      content: '방금 주문했는데 바삭하고 좋네요',
      rating: 4.5,
      menus: ['후라이드 치킨'],
    });
    const critical = `R${String(Number(added.slice(1)) + 1).padStart(9, '0')}`;
    await tx.insert(reviews).values({
      reviewCode: critical,
      brandId: brand.id,
      shopId: shop.id,
      writtenAt: new Date(Math.floor(now.getTime() / 1000) * 1000),
      content: '한 시간 넘게 기다렸는데 치킨이 다 식어서 왔어요',
      rating: 1,
      menus: ['양념 치킨'],
    });
    await tx.delete(reviews).where(eq(reviews.id, toRemove.id));
    return { replied: toReply.code, alerted: toAlert.code, added, critical, removed: toRemove.code };
  });
}
