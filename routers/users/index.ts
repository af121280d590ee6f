import { router } from '../../server/trpc';
import { get } from './get';
import { list } from './list';

export const usersRouter = router({ list, get });
