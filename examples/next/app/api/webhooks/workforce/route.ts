// The App Router webhook route: verified, deduplicated, queued; after() keeps queued work alive past the answer.
// #region route
import { createNextRouteHandler } from 'workforce-webhooks/next';
import { receiver } from '../../../../lib/webhooks';

const handler = createNextRouteHandler(receiver);

// Every method, not only POST: anything else gets the receiver's 405 with `Allow: POST`, not Next's bare 405.
export {
  handler as DELETE,
  handler as GET,
  handler as HEAD,
  handler as OPTIONS,
  handler as PATCH,
  handler as POST,
  handler as PUT,
};
// #endregion route
