// The peer: @octokit/webhooks' `createNodeMiddleware` on node:http, one no-op handler, as its README shows.
import { createServer } from 'node:http';
import { createNodeMiddleware, Webhooks } from '@octokit/webhooks';
import { SECRET } from '../fixtures.js';
import { PATH, ready } from './common.js';

const webhooks = new Webhooks({ secret: SECRET });
webhooks.on('push', () => {});
const server = createServer(createNodeMiddleware(webhooks, { path: PATH }));
server.listen(0, '127.0.0.1', () => ready(server.address()));
