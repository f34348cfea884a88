// The Pages API route behind Next's own request handling (its apiResolver, and the body clone it makes for a
// middleware): Next's parser left on is said once with the config line; a middleware that read the body costs nothing.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createNextApiHandler } from 'workforce-webhooks/next';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import { watchedReceiver } from '../contract/adapter-suite.js';
import { recordingLogger } from '../support/logger.js';

// Next's own modules, as `next start` runs them for a Pages API route: no part of them is stood in for.
const require = createRequire(import.meta.url);
type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
const { apiResolver } = require('next/dist/server/api-utils/node/api-resolver.js') as {
  apiResolver(
    req: IncomingMessage,
    res: ServerResponse,
    query: object,
    module: { default: Route; config?: object },
    context: object,
    propagateError: boolean,
    dev: boolean,
    page: string,
  ): Promise<void>;
};
const { getCloneableBody } = require('next/dist/server/body-streams.js') as {
  getCloneableBody(req: IncomingMessage): {
    cloneBodyStream(): NodeJS.ReadableStream;
    finalize(): Promise<void>;
  };
};

const PAGE = '/api/webhooks/workforce';

describe("createNextApiHandler under Next's apiResolver", () => {
  it('with config.api.bodyParser on: 500 raw_body_unavailable, nothing run, the config line said once', async () => {
    const logger = recordingLogger();
    const { receiver, seen } = watchedReceiver({ logger });
    const route = { default: createNextApiHandler(receiver), config: { api: { bodyParser: true } } };
    const app = await listen(
      createServer((req, res) => void apiResolver(req, res, {}, route, {}, false, false, PAGE)),
    );
    onTestFinished(() => app.close());
    for (let i = 0; i < 2; i++)
      expectAnswer(await post(app.url, await leaveApproved()), 500, { error: 'raw_body_unavailable' });
    await receiver.close();
    expect(seen).toEqual([]);
    const said = logger.lines.filter((line) => line.level === 'error' || line.level === 'warn');
    expect(said).toHaveLength(1);
    expect(said[0]?.msg).toContain('export const config = { api: { bodyParser: false } }');
  });

  it('behind a middleware that read its copy of the body: the route still gets the signed bytes, run once', async () => {
    const logger = recordingLogger();
    const { receiver, seen } = watchedReceiver({ logger });
    const route = { default: createNextApiHandler(receiver), config: { api: { bodyParser: false } } };
    const copies: number[] = [];
    const app = await listen(
      createServer(async (req, res) => {
        // What Next does when a middleware runs: the middleware reads a clone, the route gets the buffered rest.
        const body = getCloneableBody(req);
        let read = 0;
        for await (const chunk of body.cloneBodyStream()) read += (chunk as Buffer).length;
        copies.push(read);
        await body.finalize();
        await apiResolver(req, res, {}, route, {}, false, false, PAGE);
      }),
    );
    onTestFinished(() => app.close());
    const delivery = await leaveApproved();
    expectAnswer(await post(app.url, delivery), 202, { received: true });
    expectAnswer(await post(app.url, delivery), 200, { received: true, duplicate: true });
    await receiver.close();
    expect(copies).toEqual([Buffer.byteLength(delivery.body), Buffer.byteLength(delivery.body)]);
    expect(seen).toEqual([delivery.event.id]);
    expect(logger.lines.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
  });
});
