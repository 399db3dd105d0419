import type { Context } from "hono";
import { type ClientIpSource, requestClientIp, UNKNOWN_CLIENT } from "../http/client-ip.ts";
import type { Env } from "../http/route.ts";
import type { KioskSightings } from "./sightings.ts";

/**
 * The one line a route handler adds to record that a kiosk called with `key` and was answered:
 * the client IP comes from the same source as the rate limits'. A system-name write passes the name
 * it wrote (the seat checks count its changes).
 *
 * @example
 * const seen = sightingRecorder(deps);
 * seen(c, key, version);
 */
export function sightingRecorder(deps: { sightings: KioskSightings; clientIpSource: ClientIpSource }): (c: Context<Env>, key: string, version?: string, systemName?: string) => void {
  return function seen(c, key, version, systemName) {
    const ip = requestClientIp(c, deps.clientIpSource);
    deps.sightings.saw(key, ip === UNKNOWN_CLIENT ? null : ip, version, systemName);
  };
}
