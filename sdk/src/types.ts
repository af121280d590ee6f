import type { PartnerApiInputs, Review } from './api.generated.js';

// Names for the types partners use most, so nobody writes `PartnerApiOutputs['reviews']['list']['items']
// [number]`. The answers (Brand, User, Shop, Review, ReviewChange, ReviewStatsRow, SalesRow) are named where
// they are generated, so hovers show the name; these are aliases of the generated types, not copies.

export type { Brand, Review, ReviewChange, ReviewStatsRow, SalesRow, Shop, User } from './api.generated.js';

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
export type ReviewsChangesParams = PartnerApiInputs['reviews']['changes'];
export type ReviewStatsListParams = PartnerApiInputs['reviewStats']['list'];
export type SalesListParams = PartnerApiInputs['sales']['list'];
