// The App Router webhook route on the edge runtime: the same receiver, its memory store and queue per isolate.
import { createNextRouteHandler } from 'workforce-webhooks/next';
import { receiver } from '../../../../lib/webhooks';

export const runtime = 'edge';

export const POST = createNextRouteHandler(receiver);
