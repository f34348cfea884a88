// Methods Node's parser accepts beyond GET/PUT/DELETE/HEAD (test/adapters/methods.test.ts), through every adapter
// on its real framework: the receiver's 405 with `Allow: POST`. Fastify routes only its own list of methods, so
// there a method outside it (PURGE, LINK) gets Fastify's own 404, never a 2xx or 3xx (README, "Fastify").
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Answer, send } from '../contract/adapter-client.js';
import { type Mount, watchedReceiver } from '../contract/adapter-suite.js';
import { everyAdapter } from '../support/node-stream-adapters.js';

// QUERY (RFC 10008) with no Content-Type: Fastify refuses it with its own 400 before the route unless the plugin
// takes it. OPTIONS and PATCH: methods Fastify routes beside POST.
const ROUTED = ['QUERY', 'OPTIONS', 'PATCH'];
// Methods Node parses that Fastify 5 routes for no one.
const UNROUTED_BY_FASTIFY = ['PURGE', 'LINK'];

async function sendTo(mount: Mount, method: string, init: RequestInit = {}): Promise<Answer> {
  const app = await mount(watchedReceiver().receiver);
  onTestFinished(() => app.close());
  return send(app.url, { method, ...init });
}

function expect405(answer: Answer): void {
  expect({ status: answer.status, allow: answer.headers.get('allow'), body: answer.text }).toEqual({
    status: 405,
    allow: 'POST',
    body: '{"error":"method_not_allowed"}',
  });
}

for (const [name, mount] of Object.entries(everyAdapter)) {
  describe(`${name}: methods beyond the common ones`, () => {
    it.each(ROUTED)('answers %s with no body the receiver’s 405 and Allow: POST', async (method) => {
      expect405(await sendTo(mount, method));
    });

    it('answers QUERY with a Content-Type and a body the receiver’s 405', async () => {
      const init = { headers: { 'content-type': 'application/json' }, body: '{"q":1}' };
      expect405(await sendTo(mount, 'QUERY', init));
    });

    it.each(UNROUTED_BY_FASTIFY)(
      name === 'Fastify'
        ? 'leaves %s, which Fastify does not route, to Fastify’s own 404'
        : 'answers %s the receiver’s 405 and Allow: POST',
      async (method) => {
        const answer = await sendTo(mount, method);
        // `send` already fails a 3xx.
        if (name === 'Fastify') expect(answer.status).toBe(404);
        else expect405(answer);
      },
    );
  });
}
