// Starts and stops a real, throwaway 3-master Redis Cluster on free loopback ports with its own temporary directory.
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { launchRedisServer, REDIS_SERVER_BINARY } from '../setup/redis-server.js';
import { freePort, onFreePort } from './free-port.js';

/** Where the Debian package puts the binary; `REDIS_CLI` overrides it. */
export const REDIS_CLI_BINARY: string = process.env.REDIS_CLI ?? '/usr/bin/redis-cli';

const run = promisify(execFile);

/** A Redis Cluster this process started. */
export interface RedisCluster {
  /** The masters' addresses, for `new Cluster(nodes)`. */
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  /** Kills every node, waits for them to exit, and removes the directory. */
  stop(): Promise<void>;
}

/**
 * Whether redis-server and redis-cli can be run here; throws under `WFWH_REQUIRE_REDIS=1` when they cannot.
 * @example
 * describe.skipIf(!hasRedisCluster())('on a Redis Cluster', () => {});
 */
export function hasRedisCluster(): boolean {
  const found = existsSync(REDIS_SERVER_BINARY) && existsSync(REDIS_CLI_BINARY);
  // As for the other Redis tests: CI (WFWH_REQUIRE_REDIS=1) fails instead of skipping.
  if (!found && process.env.WFWH_REQUIRE_REDIS === '1')
    throw new Error(`${REDIS_SERVER_BINARY} and ${REDIS_CLI_BINARY} are needed (WFWH_REQUIRE_REDIS=1)`);
  return found;
}

// The bus port is chosen too: the default (port + 10 000) may be taken, or past 65 535, for an ephemeral port.
const launch = (port: number, busPort: number, dir: string): Promise<ChildProcess> =>
  launchRedisServer(port, dir, [
    '--cluster-enabled',
    'yes',
    '--cluster-port',
    String(busPort),
    '--cluster-config-file',
    join(dir, `nodes-${port}.conf`),
  ]);

async function stopNode(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL'); // throwaway data: no need to wait for a clean shutdown
  await exited;
}

async function clusterState(port: number): Promise<string> {
  const { stdout } = await run(REDIS_CLI_BINARY, ['-h', '127.0.0.1', '-p', String(port), 'CLUSTER', 'INFO']);
  return /cluster_state:(\w+)/.exec(stdout)?.[1] ?? 'unknown';
}

/**
 * Starts three redis-server masters on free ports of 127.0.0.1, joins them with `redis-cli --cluster create`
 * (16 384 slots split three ways, no replicas), and waits until every node reports `cluster_state:ok`.
 * @example
 * const redis = await startRedisCluster();
 * const cluster = new Cluster([...redis.nodes], { enableOfflineQueue: false, redisOptions: { maxRetriesPerRequest: 1 } });
 * await redis.stop();
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'wfwh-redis-cluster-'));
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(children.map(stopNode));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { port, child } = await onFreePort(async (port) => ({
        port,
        child: await launch(port, await freePort(), dir),
      }));
      ports.push(port);
      children.push(child);
    }
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    await run(
      REDIS_CLI_BINARY,
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: 20_000 },
    );
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(ports.map(clusterState));
      if (states.every((state) => state === 'ok')) break;
      if (Date.now() > deadline)
        throw new Error(`the cluster did not become ok within 20 s: ${states.join(', ')}`);
      await sleep(100);
    }
    return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
