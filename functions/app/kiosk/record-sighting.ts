import type { Context } from "hono";
import { type ClientIpSource, requestClientIp, UNKNOWN_CLIENT } from "../http/client-ip.ts";
import type { Env } from "../http/route.ts";
import type { KioskCall, KioskSightings } from "./sightings.ts";

/**
 * The one line a route handler adds to record that a kiosk called with `key` and was answered:
 * the client IP comes from the same source as the rate limits'. The route tells what the call was
 * (`call`): the schedule version it holds, the system name it wrote, whether kiosks make it when
 * they start (the seat checks tell a start from a poll).
 *
 * @example
 * const seen = sightingRecorder(deps);
 * seen(c, key, { version });
 */
export function sightingRecorder(deps: { sightings: KioskSightings; clientIpSource: ClientIpSource }): (c: Context<Env>, key: string, call?: KioskCall) => void {
  return function seen(c, key, call) {
    const ip = requestClientIp(c, deps.clientIpSource);
    deps.sightings.saw(key, ip === UNKNOWN_CLIENT ? null : ip, call);
  };
}
