import type { Requester, UpstashRequest, UpstashResponse } from "@upstash/redis";
import { ErrorReply } from "redis";
import { hexDigest } from "../hex.ts";

/** What the requester needs of a Redis connection: node-redis's `sendCommand`. */
export interface CommandSender {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * The first line of @upstash/ratelimit's Lua scripts (v2.1 on). `allow-key-locking` is known to
 * Upstash only; stock Redis 7 refuses the script with `ERR Unexpected flag in script shebang`.
 * The flag is a locking optimisation, so the script runs the same without the line.
 */
const UPSTASH_SHEBANG = "#!lua flags=allow-key-locking\n";

/**
 * An @upstash/redis `Requester` that sends each command to a plain Redis server over one
 * node-redis connection speaking RESP2 (`openRedisConnection`), so `REDIS_URL` deployments (and
 * our tests) run @upstash/ratelimit's own scripts for real:
 * - `EVAL` and `SCRIPT LOAD` lose the Upstash-only shebang line;
 * - `EVALSHA` with the hash the library knows (of the script with the shebang) is sent with the
 *   hash Redis knows (without it), once this requester has seen the script, so each limit check
 *   stays one round trip;
 * - replies come back as Upstash's REST API writes them: `{result}` (nil as `null`), or `{error}`
 *   with Redis's message, which is how the library recognises `NOSCRIPT` and falls back to `EVAL`.
 *
 * Only single commands are forwarded: @upstash/redis sends pipelines through a requester only
 * when asked for one explicitly, and @upstash/ratelimit's single-region limiters never do.
 *
 * @example
 * const redis = new Redis(redisRequester(nodeRedisClient));
 */
export function redisRequester(connection: CommandSender): Requester {
  /** @upstash/ratelimit's script hash -> the hash of the script as Redis stored it. */
  const storedAs = new Map<string, string>();

  async function stripped(script: string): Promise<string> {
    if (!script.startsWith(UPSTASH_SHEBANG)) return script;
    const runnable = script.slice(UPSTASH_SHEBANG.length);
    storedAs.set(await hexDigest("SHA-1", script), await hexDigest("SHA-1", runnable));
    return runnable;
  }

  async function forRedis(command: string[]): Promise<string[]> {
    const [name = "", first = "", second = ""] = command;
    switch (name.toLowerCase()) {
      case "eval":
      case "eval_ro":
        return [name, await stripped(first), ...command.slice(2)];
      case "evalsha":
      case "evalsha_ro":
        return [name, storedAs.get(first) ?? first, ...command.slice(2)];
      case "script":
        return first.toLowerCase() === "load" ? [name, first, await stripped(second)] : command;
      default:
        return command;
    }
  }

  return {
    async request<TResult>(request: UpstashRequest): Promise<UpstashResponse<TResult>> {
      if (request.path?.length) throw new Error(`not forwarded to Redis: /${request.path.join("/")}`);
      const command = (request.body as unknown[]).map(String);
      try {
        const result = await connection.sendCommand(await forRedis(command));
        return { result: (result ?? null) as TResult };
      } catch (error) {
        if (error instanceof ErrorReply) return { error: error.message };
        throw error;
      }
    },
  };
}
