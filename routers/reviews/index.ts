import { router } from '../../server/trpc';
import { get } from './get';
import { list } from './list';

export const reviewsRouter = router({ list, get });
