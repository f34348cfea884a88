// Lua scripts on the user's ioredis client, shared by the Redis store and its ordering. Internal: not a subpath.
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/**
 * Lua: `below(a, b)`, true when string `a` sorts before `b` byte by byte, as Redis orders sorted-set members (Lua's
 * `<` uses the C library's collation, which may follow the server's locale). For scripts that compare ids or marks.
 */
export const LUA_BELOW = `local function below(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
`;

/** A script's source and the SHA-1 that EVALSHA names it by. */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

/**
 * A script, named by its SHA-1 for EVALSHA.
 * @example
 * const renew = script("return redis.call('PEXPIRE', KEYS[1], ARGV[1])");
 */
export function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Runs `script` with `keys` and `args`: EVALSHA first, and the source once when the server lost its script cache
 * (a restart, a failover). The source is sent after the NOSCRIPT answer, so behind any command sent meanwhile.
 * @example
 * const renewed = (await runScript(client, renew, [key], [30_000])) === 1;
 */
export async function runScript(
  client: Redis | Cluster,
  { source, sha }: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.call('EVALSHA', sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    return client.call('EVAL', source, keys.length, ...keys, ...args);
  }
}
