// The App Router webhook route: verified, deduplicated, queued; after() keeps queued work alive past the answer.
// #region route
import { createNextRouteHandler } from 'workforce-webhooks/next';
import { receiver } from '../../../../lib/webhooks';

export const POST = createNextRouteHandler(receiver);
// #endregion route
