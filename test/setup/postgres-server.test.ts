// The test PostgreSQL itself: it answers, runs as a non-root user, and keeps its port and data across a crash.
import { stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { connectPostgres, postgresUrl } from './postgres-helpers.js';
import { startPostgresServer } from './postgres-server.js';

describe.skipIf(!postgresUrl)('test PostgreSQL', () => {
  it('serves the run on loopback, never as root', async () => {
    const pool = connectPostgres();
    const { rows } = await pool.query<{ version: string; data: string }>(
      "SELECT version(), current_setting('data_directory') AS data",
    );
    expect(rows[0]?.version).toMatch(/^PostgreSQL \d+/);
    expect(new URL(postgresUrl).hostname).toBe('127.0.0.1');
    // The cluster belongs to the user the server runs as: postgres under root, else whoever runs the tests.
    const owner = (await stat(rows[0]?.data ?? '')).uid;
    expect(owner).not.toBe(0);
    if (process.getuid?.() !== 0) expect(owner).toBe(process.getuid?.());
  });

  it('stops (as a crash) and starts again on the same port with its data', { timeout: 120_000 }, async () => {
    const server = await startPostgresServer();
    try {
      const pool = connectPostgres(server.url, { max: 1 });
      await pool.query('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
      await server.stop({ crash: true });
      await expect(pool.query('SELECT 1')).rejects.toThrow();
      await server.start();
      expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
      const { rows } = await pool.query<{ n: number }>('SELECT n FROM kept');
      expect(rows).toEqual([{ n: 7 }]);
    } finally {
      await server.dispose();
    }
  });
});
