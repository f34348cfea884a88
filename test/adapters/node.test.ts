// The adapter contract through `createNodeHandler` on a plain `http.createServer`.
import { createServer } from 'node:http';
import { createNodeHandler } from 'workforce-webhooks/node';
import { listen } from '../contract/adapter-listen.js';
import { describeAdapterContract } from '../contract/adapter-suite.js';

describeAdapterContract('node:http', (receiver) => listen(createServer(createNodeHandler(receiver))));
