// The BullMQ queue refuses a Redis Cluster client when it is made, naming what to give it instead, rather than failing
// at the receiver's start with a BullMQ message that names neither.
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';

describe('createBullmqQueue given a Redis Cluster client', () => {
  it('refuses it at once with the fix, opening no connection', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 1 },
    });
    try {
      expect(() => createBullmqQueue({ connection: cluster })).toThrow(ConfigurationError);
      expect(() => createBullmqQueue({ connection: cluster })).toThrow(/not a Cluster.*standalone Redis/);
      // Nothing was opened from it: the client given is still waiting to connect.
      expect(cluster.status).toBe('wait');
    } finally {
      cluster.disconnect();
    }
  });
});
