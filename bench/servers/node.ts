// node:http: the package's `createNodeHandler` against a hand-written verify-and-parse endpoint.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createNodeHandler } from 'workforce-webhooks/node';
import { SECRET } from '../fixtures.js';
import { floorVerifyAndParse } from '../floor.js';
import { ACCEPTED, benchReceiver, ready, variant } from './common.js';

function handWritten(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const header = req.headers['svc-signature'];
    const event = floorVerifyAndParse(body, typeof header === 'string' ? header : undefined, SECRET);
    res.writeHead(event === undefined ? 400 : 202, { 'content-type': 'application/json' });
    res.end(event === undefined ? '{"error":"signature_mismatch"}' : ACCEPTED);
  });
}

const handler = variant() === 'baseline' ? handWritten : createNodeHandler(await benchReceiver());
const server = createServer(handler);
server.listen(0, '127.0.0.1', () => ready(server.address()));
