import { createRoute } from "@hono/zod-openapi";
import { ensureAuthUser } from "../auth-users/link-auth-user.ts";
import { ErrorMessage } from "../http/error-message.ts";
import type { Deps } from "../deps.ts";
import { isUnavailable } from "../db/unavailable.ts";
import { Failure } from "../errors.ts";
import { parseJsonBody, readBody } from "../http/body.ts";
import { json } from "../http/json.ts";
import { headerSchemes } from "../http/openapi-security.ts";
import { bodyTimeout, bodyTooLarge, rateLimited, rateLimitUnavailable, withRateLimitHeaders } from "../http/openapi-responses.ts";
import { type App, jsonContent, route } from "../http/route.ts";
import { errorMessage, maskKey } from "../log.ts";
import { deliverEmail } from "../mail/outbox.ts";
import { enforceLimit } from "../rate-limit/enforce-limit.ts";
import { limitByIp } from "../rate-limit/middleware.ts";
import { RULES } from "../rate-limit/rules.ts";
import { type Onboarded, onboardAccount } from "./onboard-account.ts";
import { OnboardingRequest, OnboardingResponse, parseOnboardingRequest, SignatureError } from "./schemas.ts";
import { ONBOARDING_PATH, signatureVerifier } from "./signature.ts";
import { SIGNED_REQUEST_SCHEMES } from "./signed-request-schemes.ts";
import { recordNonce } from "./store.ts";

/**
 * Section 4.7, signed as section 5 item 6 says. The order is the point: the per-IP limit first;
 * the body read under the 64 KiB limit; the signature over those raw bytes, and only then the
 * nonce, so unsigned traffic can neither burn nonces nor an e-mail's quota; then the body's
 * fields, the per-e-mail limit, and one transaction for account, key and e-mail; after commit,
 * delivery, then the account's Supabase Auth user (when on Supabase), neither failing the answer.
 */
export function onboardingRoutes(app: App, deps: Deps): void {
  const verify = signatureVerifier(deps.signingSecret, deps.signingSecretPrevious);
  /** The spec's 500; logged here unless it is a database outage, which is logged once where detected. */
  const notCreated = (error: unknown) => {
    if (!isUnavailable(error)) deps.log("error", "onboarding_failed", { error: errorMessage(error) });
    return new Failure("account_not_created");
  };
  const signedWith = headerSchemes(app, SIGNED_REQUEST_SCHEMES);
  app.use(ONBOARDING_PATH, limitByIp(deps, RULES.onboardingPerIp));
  route(
    app,
    createRoute({
      method: "post",
      path: ONBOARDING_PATH,
      operationId: "createAccount",
      summary: "Signed webhook: create the account if absent, issue a license key and e-mail it",
      tags: ["onboarding"],
      // x-timestamp, x-nonce and x-signature: the security schemes say how to sign.
      security: [signedWith("onboardingTimestamp", "onboardingNonce", "onboardingSignature")],
      request: { body: { ...jsonContent(OnboardingRequest, "The account to onboard"), required: true } },
      responses: withRateLimitHeaders({
        200: jsonContent(OnboardingResponse, "Account ready; a new license key is on its way by e-mail"),
        400: jsonContent(ErrorMessage, "`request body is required`, `invalid JSON body`, `email is required`, or an invalid e-mail or name"),
        401: jsonContent(SignatureError, "`invalid signature`, whatever the cause"),
        408: bodyTimeout,
        413: bodyTooLarge,
        429: rateLimited,
        500: jsonContent(ErrorMessage, "`the account could not be created`"),
        503: rateLimitUnavailable,
      }),
    }),
    async (c) => {
      const body = await readBody(c.req.raw);
      const nonce = await verify(c.req.raw.headers, body, deps.now());
      if (nonce === undefined) throw new Failure("invalid_signature");
      // A nonce the database could not record is no replay: the platform retries with a new one.
      const fresh = await recordNonce(deps.db, nonce, deps.now()).catch((error: unknown) => {
        throw notCreated(error);
      });
      if (!fresh) throw new Failure("invalid_signature");
      const input = parseOnboardingRequest(parseJsonBody(body));

      const limitHeaders = await enforceLimit(deps, RULES.onboardingPerEmail, input.email);

      let onboarded: Onboarded;
      try {
        onboarded = await onboardAccount(deps, input);
      } catch (error) {
        throw notCreated(error);
      }
      deps.log("info", "account_onboarded", { accountId: onboarded.accountId, key: maskKey(onboarded.key) });
      await deliverEmail(deps, onboarded.outboxId);
      await ensureAuthUser(deps, onboarded.accountId);
      return json(
        { success: true, message: "account ready; the license key is on its way by e-mail", user_id: onboarded.accountId },
        200,
        limitHeaders,
      );
    },
  );
}
