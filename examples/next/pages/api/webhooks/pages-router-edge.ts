// The Pages Router API route on the edge runtime: the same default export answers Next's Request.
import { createNextApiHandler } from 'workforce-webhooks/next';
import { receiver } from '../../../lib/webhooks';

export const config = { runtime: 'edge' };

export default createNextApiHandler(receiver);
