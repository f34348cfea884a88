// Fastify 5: the package's plugin against a buffer content-type parser plus a hand-written verify and parse.
import Fastify from 'fastify';
import { SECRET } from '../fixtures.js';
import { floorVerifyAndParse } from '../floor.js';
import { benchReceiver, PATH, ready, variant } from './common.js';

const app = Fastify();
if (variant() === 'baseline') {
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.post(PATH, async (req, reply) => {
    const header = req.headers['svc-signature'];
    const event = floorVerifyAndParse(
      req.body as Buffer,
      typeof header === 'string' ? header : undefined,
      SECRET,
    );
    return event === undefined
      ? reply.code(400).send({ error: 'signature_mismatch' })
      : reply.code(202).send({ received: true });
  });
} else {
  const { createFastifyPlugin } = await import('workforce-webhooks/fastify');
  await app.register(createFastifyPlugin(await benchReceiver(), { path: PATH }));
}
await app.listen({ port: 0, host: '127.0.0.1' });
ready(app.server.address());
