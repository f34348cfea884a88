// An endpoint's answer whose body never ends, for the commands that must read only its start.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A handler answering `status` with a body that never ends: a chunk whenever the socket takes one, until the
 * client goes away.
 * @example
 * createServer(endless(500));
 */
export const endless =
  (status: number) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(16_384, 'a');
    const more = (): void => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', more);
    req.socket.on('close', () => res.off('drain', more));
    more();
  };
