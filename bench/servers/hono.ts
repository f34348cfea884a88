// Hono on @hono/node-server: the package's handler against a hand-written verify and parse.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { SECRET } from '../fixtures.js';
import { floorVerifyAndParse } from '../floor.js';
import { benchReceiver, PATH, ready, variant } from './common.js';

const app = new Hono();
if (variant() === 'baseline') {
  app.post(PATH, async (c) => {
    const body = Buffer.from(await c.req.arrayBuffer());
    const event = floorVerifyAndParse(body, c.req.header('svc-signature'), SECRET);
    return event === undefined
      ? c.json({ error: 'signature_mismatch' }, 400)
      : c.json({ received: true }, 202);
  });
} else {
  const { createHonoHandler } = await import('workforce-webhooks/hono');
  app.post(PATH, createHonoHandler(await benchReceiver()));
}
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(server.address()));
