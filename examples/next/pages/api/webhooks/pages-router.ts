// The same receiver on a Pages Router API route: Next's body parser must be off, or only parsed JSON is left.
// #region pages
import { createNextApiHandler } from 'workforce-webhooks/next';
import { receiver } from '../../../lib/webhooks';

export const config = { api: { bodyParser: false } };

export default createNextApiHandler(receiver);
// #endregion pages
