// The adapters that read a node:http request stream themselves, each mounted on its real framework on loopback at
// WEBHOOK_PATH: where a body that stalls or runs over must get the receiver's own answer. And every adapter, with
// the Web-standard ones, for edges all of them must hold.
import { createServer, type Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { createNextApiHandler, createNextRouteHandler } from 'workforce-webhooks/next';
import { createNodeHandler } from 'workforce-webhooks/node';
import { listen, WEBHOOK_PATH } from '../contract/adapter-listen.js';
import type { Mount } from '../contract/adapter-suite.js';

/**
 * node:http, Express, Fastify, Hono on @hono/node-server and the Next Pages Router (its parser off), by name.
 * @example
 * const app = await nodeStreamAdapters.Express!(receiver); await fetch(app.url, { method: 'POST', body });
 */
export const nodeStreamAdapters: Readonly<Record<string, Mount>> = {
  'node:http': (receiver: Receiver) => listen(createServer(createNodeHandler(receiver))),
  Express: (receiver) => {
    const app = express();
    app.all(WEBHOOK_PATH, createExpressMiddleware(receiver));
    return listen(createServer(app));
  },
  Fastify: async (receiver) => {
    const app = Fastify({ forceCloseConnections: true });
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: `${address}${WEBHOOK_PATH}`, close: () => app.close() };
  },
  'Hono on @hono/node-server': (receiver) => {
    const app = new Hono().all(WEBHOOK_PATH, createHonoHandler(receiver));
    return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
  },
  // As Next serves an API route.
  'Next Pages Router': (receiver) => {
    const handle = createNextApiHandler(receiver);
    return listen(createServer((req, res) => void handle(req, res)));
  },
};

/**
 * Every adapter: the node-stream ones, the Next App Router and bare `receiver.fetch`, on @hono/node-server.
 * @example
 * for (const [name, mount] of Object.entries(everyAdapter)) describe(name, () => { ... });
 */
export const everyAdapter: Readonly<Record<string, Mount>> = {
  ...nodeStreamAdapters,
  'Next App Router': (receiver) =>
    listen(createAdaptorServer({ fetch: createNextRouteHandler(receiver) }) as Server),
  'receiver.fetch on @hono/node-server': (receiver) =>
    listen(createAdaptorServer({ fetch: (request: Request) => receiver.fetch(request) }) as Server),
};
