import { ONBOARDING_PATH } from "../app/signatures/spec-signature.ts";
import type { SignedRequest } from "../app/signatures/signed-request.ts";

/** Quotes a string for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * A curl command line that sends `signed` to `baseUrl` at `path` (onboarding's unless given), within 300 s of signing: once under the
 * spec's scheme (its nonce is spent); under Standard Webhooks, again as a retry.
 *
 * @example
 * console.log(curlCommand("http://localhost:8000", signed));
 */
export function curlCommand(baseUrl: string, signed: SignedRequest, path: string = ONBOARDING_PATH): string {
  const headers = Object.entries(signed.headers).map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`);
  return [
    `curl -sS -X POST ${shellQuote(`${baseUrl.replace(/\/+$/, "")}${path}`)}`,
    ...headers,
    `--data-raw ${shellQuote(signed.body)}`,
  ].join(" \\\n  ");
}
