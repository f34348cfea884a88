// What Redis itself reports, for the durable sections: commands run (INFO commandstats) and its own CPU (INFO cpu).
import type { Redis } from 'ioredis';

/** Calls per command since Redis started (a script's own calls counted under their names too). */
export type CommandCounts = ReadonlyMap<string, number>;

/**
 * Reads `INFO commandstats`.
 * @example
 * const before = await commandCounts(admin);
 */
export async function commandCounts(client: Redis): Promise<CommandCounts> {
  const text = await client.info('commandstats');
  return new Map([...text.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

/**
 * Redis's CPU time so far (user + system, every thread), in microseconds, from `INFO cpu`.
 * @example
 * const before = await redisCpuMicros(admin);
 */
export async function redisCpuMicros(client: Redis): Promise<number> {
  const text = await client.info('cpu');
  const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(text)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

/** Commands per event between two readings, those the bench itself sent (`info`, polls) left out. */
export interface PerEvent {
  /** Every command Redis ran, a script's own calls included (commandstats counts both the EVALSHA and them). */
  readonly total: number;
  /** `EVALSHA 2.00, SET 1.00, ...`, largest first. */
  readonly byCommand: string;
}

/**
 * Commands per event between two `commandCounts` readings; `own` names the calls the bench made itself.
 * @example
 * const { total, byCommand } = perEvent(before, after, 1000, { info: 2 });
 */
export function perEvent(
  before: CommandCounts,
  after: CommandCounts,
  events: number,
  own: Readonly<Record<string, number>> = {},
): PerEvent {
  const deltas = [...after]
    .map(([name, calls]) => [name, (calls - (before.get(name) ?? 0) - (own[name] ?? 0)) / events] as const)
    .filter(([name, perEvent]) => perEvent > 0.005 && name !== 'info')
    .sort((a, b) => b[1] - a[1]);
  return {
    total: deltas.reduce((sum, [, n]) => sum + n, 0),
    byCommand: deltas.map(([name, n]) => `${name.toUpperCase()} ${n.toFixed(2)}`).join(', '),
  };
}
