import type { HeaderScheme } from "../http/openapi-security.ts";
import { AUTOMATIONS_PREFIX, NONCE, ONBOARDING_PATH, SIGNATURE } from "./spec-signature.ts";
import { WEBHOOK_ID } from "./standard-webhooks.ts";
import { MAX_SKEW_SECONDS, TIMESTAMP } from "./timestamp-skew.ts";

/**
 * The signed calls' headers (onboarding, and the lifecycle calls beside it), as the OpenAPI document describes them: the contract's three
 * (section 5 item 6), and Standard Webhooks' three, the other way to sign; a request uses one.
 */
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
      `five parts joined by a newline (\`\\n\`), in this order: \`POST\`, the request's path (\`${ONBOARDING_PATH}\` for onboarding; each lifecycle call under \`${AUTOMATIONS_PREFIX}\` signs its own), the x-timestamp value, the x-nonce value,`,
      "and the raw request body exactly as sent (its bytes, not a re-serialisation).",
      "Any failure (missing, malformed, expired, replayed or incorrect) is `401 {\"error\":\"invalid signature\"}`.",
    ].join(" "),
  },
  webhookId: {
    name: "webhook-id",
    description: [
      `Standard Webhooks (standardwebhooks.com), the other way to sign: the message id (\`${WEBHOOK_ID.source}\`), signed with the request: see webhookSignature.`,
      "A repeated webhook-id is a retry: it gets the first answer again and carries nothing out again (24 hours).",
      "Never send these headers together with x-timestamp, x-nonce or x-signature: such a request is 401.",
    ].join(" "),
  },
  webhookTimestamp: {
    name: "webhook-timestamp",
    description: `Standard Webhooks: Unix epoch seconds, within ${MAX_SKEW_SECONDS} seconds of the server clock either way. Signed with the request: see webhookSignature.`,
  },
  webhookSignature: {
    name: "webhook-signature",
    description: [
      "Standard Webhooks: space-separated `v1,<base64>` entries (several while the sender rotates its secret; one valid entry is enough),",
      "each the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the base64-decoded part of the `whsec_` secret",
      "shared with the automation platform (STANDARD_WEBHOOKS_SECRET). Any failure is `401 {\"error\":\"invalid signature\"}`.",
    ].join(" "),
  },
} satisfies Record<string, HeaderScheme>;
