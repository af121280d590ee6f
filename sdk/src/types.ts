import type { PartnerApiInputs, PartnerApiOutputs } from './api.generated.js';

// Names for the types partners use most, so nobody writes `PartnerApiOutputs['reviews']['list']['items']
// [number]`. They are aliases of the generated types (which carry the field docs), not copies.

/** A brand of your partner account. */
export type Brand = PartnerApiOutputs['brands']['list']['items'][number];
/** A shop owner registered in a brand, with the platform accounts they linked. */
export type User = PartnerApiOutputs['users']['get'];
/** A shop of a brand on one platform. */
export type Shop = PartnerApiOutputs['shops']['list']['items'][number];
/** A review, as the list and the single-review call answer it. */
export type Review = PartnerApiOutputs['reviews']['get'];
/** A row of review statistics: one variant per `group_by`, told apart by it. */
export type ReviewStatsRow = PartnerApiOutputs['reviewStats']['list']['items'][number];
/** A row of sales: one variant per `group_by`, told apart by it. */
export type SalesRow = PartnerApiOutputs['sales']['list']['items'][number];

/** A delivery or place-listing platform. */
export type Platform = Review['platform'];
/** A platform whose sales are collected. */
export type SalesPlatform = NonNullable<SalesListParams['platform']>;
/** The aggregation units of review statistics. */
export type ReviewStatsGroupBy = NonNullable<ReviewStatsListParams['group_by']>;
/** The aggregation units of sales. */
export type SalesGroupBy = NonNullable<SalesListParams['group_by']>;

export type BrandsListParams = NonNullable<PartnerApiInputs['brands']['list']>;
export type UsersListParams = PartnerApiInputs['users']['list'];
export type UsersGetParams = PartnerApiInputs['users']['get'];
export type ShopsListParams = PartnerApiInputs['shops']['list'];
export type ReviewsListParams = PartnerApiInputs['reviews']['list'];
export type ReviewsGetParams = PartnerApiInputs['reviews']['get'];
export type ReviewStatsListParams = PartnerApiInputs['reviewStats']['list'];
export type SalesListParams = PartnerApiInputs['sales']['list'];
