// Fastify 5: the package's plugin against a buffer content-type parser plus a hand-written verify and parse.
import Fastify, { type FastifyInstance } from 'fastify';
import { SECRET } from '../fixtures.js';
import { floorVerifyAndParse } from '../floor.js';
import { benchReceiver, PATH, ready } from './common.js';

// The hand-written endpoint: JSON read as a Buffer, verified, parsed, answered 202.
function handWritten(scope: FastifyInstance): void {
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
    done(null, body),
  );
  scope.post(PATH, async (req, reply) => {
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
}

const app = Fastify();
const variant = process.argv[2];
if (variant === 'baseline') {
  // In a plugin of its own, as an app keeps a Buffer parser off its other JSON routes (the package's plugin too).
  await app.register(async (scope) => handWritten(scope));
} else if (variant === 'root') {
  // At the root of an app that registers no plugin at all: its parser would take over every JSON route.
  handWritten(app);
} else {
  const { createFastifyPlugin } = await import('workforce-webhooks/fastify');
  await app.register(createFastifyPlugin(await benchReceiver(), { path: PATH }));
}
await app.listen({ port: 0, host: '127.0.0.1' });
ready(app.server.address());
