// Express 5: the package's middleware against `express.raw()` plus a hand-written verify and parse.
import express from 'express';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { SECRET } from '../fixtures.js';
import { floorVerifyAndParse } from '../floor.js';
import { benchReceiver, PATH, ready, variant } from './common.js';

const app = express();
if (variant() === 'baseline') {
  app.post(PATH, express.raw({ type: '*/*' }), (req, res) => {
    const event = floorVerifyAndParse(req.body as Buffer, req.get('svc-signature'), SECRET);
    if (event === undefined) res.status(400).json({ error: 'signature_mismatch' });
    else res.status(202).json({ received: true });
  });
} else {
  app.post(PATH, createExpressMiddleware(await benchReceiver()));
}
const server = app.listen(0, '127.0.0.1', () => ready(server.address()));
