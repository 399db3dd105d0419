import type { Requester, UpstashRequest, UpstashResponse } from "@upstash/redis";
import type { CommandSender } from "../../functions/app/rate-limit/redis-connection.ts";
import { RedisReplyError } from "../../functions/app/rate-limit/resp.ts";

/**
 * An @upstash/redis `Requester` that sends each command to a plain Redis server over one RESP2
 * connection (`openRedisConnection`): the Upstash stub's backend, so the tests run
 * @upstash/redis's own script calls against a real Redis, as Upstash does. Replies come back as
 * Upstash's REST API writes them: `{result}` (nil as `null`), or `{error}` with Redis's message, which is how
 * @upstash/redis recognises `NOSCRIPT` and falls back from `EVALSHA` to `EVAL`.
 *
 * Only single commands are forwarded: @upstash/redis sends pipelines through a requester only
 * when asked for one explicitly, and the limiter never does.
 *
 * @example
 * const redis = new Redis(redisRequester(connection.client));
 */
export function redisRequester(connection: CommandSender): Requester {
  return {
    async request<TResult>(request: UpstashRequest): Promise<UpstashResponse<TResult>> {
      if (request.path?.length) throw new Error(`not forwarded to Redis: /${request.path.join("/")}`);
      try {
        const result = await connection.sendCommand((request.body as unknown[]).map(String));
        return { result: (result ?? null) as TResult };
      } catch (error) {
        if (error instanceof RedisReplyError) return { error: error.message };
        throw error;
      }
    },
  };
}
