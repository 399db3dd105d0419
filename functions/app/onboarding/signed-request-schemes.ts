import type { HeaderScheme } from "../http/openapi-security.ts";
import { MAX_SKEW_SECONDS, NONCE, ONBOARDING_PATH, SIGNATURE, TIMESTAMP } from "./signature.ts";

/** The onboarding webhook's three signed headers, as the OpenAPI document describes them (section 5 item 6). */
export const SIGNED_REQUEST_SCHEMES = {
  onboardingTimestamp: {
    name: "x-timestamp",
    description: `Unix epoch seconds (\`${TIMESTAMP.source}\`), within ${MAX_SKEW_SECONDS} seconds of the server clock either way. Signed with the request: see onboardingSignature.`,
  },
  onboardingNonce: {
    name: "x-nonce",
    description: `Unique per request: printable ASCII without spaces (\`${NONCE.source}\`; a UUID is ideal). Each nonce is accepted once. Signed with the request: see onboardingSignature.`,
  },
  onboardingSignature: {
    name: "x-signature",
    description: [
      `The lowercase hexadecimal HMAC-SHA256 (\`${SIGNATURE.source}\`), keyed with the signing secret shared with the automation platform, of the canonical string:`,
      `five parts joined by a newline (\`\\n\`), in this order: \`POST\`, the path \`${ONBOARDING_PATH}\`, the x-timestamp value, the x-nonce value,`,
      "and the raw request body exactly as sent (its bytes, not a re-serialisation).",
      "Any failure (missing, malformed, expired, replayed or incorrect) is `401 {\"error\":\"invalid signature\"}`.",
    ].join(" "),
  },
} satisfies Record<string, HeaderScheme>;
