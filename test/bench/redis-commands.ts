import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { unfakedEnv } from "../support/child-env.ts";

/**
 * `redis-cli` with `args`, out of libfaketime's reach as redis-server is: under it, redis-cli
 * blocks for ever on a futex (10 of 10 calls here), and a fleet simulation run under `faketime`
 * hung on its first reading. The counters it reads do not depend on the clock.
 */
async function redisCli(port: number, ...args: string[]): Promise<string> {
  return (await promisify(execFile)("redis-cli", ["-p", String(port), ...args], { env: unfakedEnv() })).stdout;
}

/**
 * Every command the redis-server on `port` has run since it started or since `CONFIG RESETSTAT`,
 * from INFO commandstats, which counts the commands a script runs as Upstash bills them (EVALSHA
 * and its INCRBY are two); the INFO calls that ask are left out.
 *
 * @example
 * const before = await billedRedisCommands(6379);
 */
export async function billedRedisCommands(port: number): Promise<number> {
  const stdout = await redisCli(port, "INFO", "commandstats");
  let calls = 0;
  for (const [, name, count] of stdout.matchAll(/^cmdstat_([^:]+):calls=(\d+),/gm)) if (name !== "info") calls += Number(count);
  return calls;
}

/**
 * Bytes the redis-server on `port` has read from and written to its clients since it started or
 * since `CONFIG RESETSTAT` (INFO stats total_net_input_bytes + total_net_output_bytes): what a
 * command costs on the wire, for a plan's bandwidth limit. Includes the few KB of the INFO calls
 * that ask.
 *
 * @example
 * const before = await redisNetBytes(6379);
 */
export async function redisNetBytes(port: number): Promise<number> {
  const stdout = await redisCli(port, "INFO", "stats");
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(stdout)?.[1] ?? 0);
  return field("total_net_input_bytes") + field("total_net_output_bytes");
}
