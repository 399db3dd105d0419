/**
 * How far a signed request's timestamp may be from the server clock, either way, under every
 * scheme: the contract's x-timestamp and Standard Webhooks' webhook-timestamp (its 5 minutes).
 */
export const MAX_SKEW_SECONDS = 300;

/** A signed timestamp: whole Unix seconds only; a millisecond timestamp, a sign, a fraction or `NaN` is malformed. */
export const TIMESTAMP = /^[0-9]{1,11}$/;

/**
 * Whether `timestamp` is whole Unix seconds within `MAX_SKEW_SECONDS` of `nowMs` (300 s passes,
 * 301 s fails, either way).
 *
 * @example
 * if (!withinSkew(headers.get("x-timestamp") ?? "", deps.now())) return undefined;
 */
export function withinSkew(timestamp: string, nowMs: number): boolean {
  return TIMESTAMP.test(timestamp) && Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) <= MAX_SKEW_SECONDS;
}
