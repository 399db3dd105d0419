import { ONBOARDING_PATH, signRequest } from "./signature.ts";

export interface SignedRequest {
  headers: Record<string, string>;
  /** The exact body that was signed: send these bytes unchanged. */
  body: string;
}

/**
 * Signs an onboarding request the way integrators must: for tests, the signing command and
 * anyone embedding Cadence's own code.
 *
 * @example
 * const signed = await signOnboardingRequest(secret, JSON.stringify({ email: "ada@example.com" }));
 * await fetch(`${baseUrl}/api/v2/automations/create/account`, { method: "POST", ...signed });
 */
export async function signOnboardingRequest(
  secret: string,
  body: string,
  options: { nowMs?: number; nonce?: string } = {},
): Promise<SignedRequest> {
  const timestamp = String(Math.floor((options.nowMs ?? Date.now()) / 1000));
  const nonce = options.nonce ?? crypto.randomUUID();
  const signature = await signRequest(secret, timestamp, nonce, new TextEncoder().encode(body));
  return {
    headers: {
      "content-type": "application/json",
      "x-timestamp": timestamp,
      "x-nonce": nonce,
      "x-signature": signature,
    },
    body,
  };
}

/** Quotes a string for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * A curl command line that sends `signed` to `baseUrl`; valid once, within 300 s of signing.
 *
 * @example
 * console.log(curlCommand("http://localhost:8000", signed));
 */
export function curlCommand(baseUrl: string, signed: SignedRequest): string {
  const headers = Object.entries(signed.headers).map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`);
  return [
    `curl -sS -X POST ${shellQuote(`${baseUrl.replace(/\/+$/, "")}${ONBOARDING_PATH}`)}`,
    ...headers,
    `--data-raw ${shellQuote(signed.body)}`,
  ].join(" \\\n  ");
}
