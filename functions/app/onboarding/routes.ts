import { DEFAULT_DEADLINE_MS } from "../db/database.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { ensureAuthUser } from "../auth-users/link-auth-user.ts";
import { ErrorMessage } from "../http/error-message.ts";
import type { Deps } from "../deps.ts";
import { isUnavailable } from "../db/unavailable.ts";
import { Failure, UNAVAILABLE_RETRY_AFTER_SECONDS } from "../errors.ts";
import { hexDigest } from "../hex.ts";
import { parseJsonBody, readBody } from "../http/body.ts";
import { jsonText } from "../http/json.ts";
import { headerSchemes } from "../http/openapi-security.ts";
import { bodyTimeout, bodyTooLarge, rateLimited, rateLimitUnavailable, withRateLimitHeaders } from "../http/openapi-responses.ts";
import { type App, jsonContent, route } from "../http/route.ts";
import { errorMessage, maskKey } from "../log.ts";
import { deliverEmail } from "../mail/outbox.ts";
import { type CountedRequest, countRequest } from "../rate-limit/enforce-limit.ts";
import { limitByIp } from "../rate-limit/middleware.ts";
import { RULES } from "../rate-limit/rules.ts";
import { SIGNED_REQUEST_SCHEMES } from "../signatures/signed-request-schemes.ts";
import { ONBOARDING_PATH } from "../signatures/spec-signature.ts";
import { requestVerifier } from "../signatures/verify-request.ts";
import { claimLeaseSeconds, IdempotencyKeyHeader, idempotencyIdOf, REPLAYED_HEADER } from "./idempotency.ts";
import { type Onboarded, onboardAccount, onboardAccountOnce } from "./onboard-account.ts";
import { type Onboarding, onboardingAnswer, OnboardingRequest, OnboardingResponse, parseOnboardingRequest, SignatureError } from "./schemas.ts";
import { claimOnboardingKey, type IdempotencyId, recordNonce, releaseOnboardingKey } from "./store.ts";

const retryAfter = { "Retry-After": { $ref: "#/components/headers/Retry-After" } };

/** What one onboarding carried out, whichever way: the account, its key's e-mail, and the exact answer. */
interface Carried {
  onboarded: Onboarded;
  answer: string;
}

/**
 * Section 4.7, signed as section 5 item 6 says, or with Standard Webhooks. The order is the point:
 * the per-IP limit first; the body read under the 64 KiB limit; the signature over those raw bytes
 * under exactly one scheme, and only then the spec scheme's nonce, so unsigned traffic can neither
 * burn nonces nor an e-mail's quota; then the body's fields. A request with an id (Idempotency-Key,
 * or webhook-id) then claims it: a retry gets the first answer, counting nothing. Then the per-e-mail
 * limit, and one transaction for account, key, e-mail (and the id's answer); after commit, delivery,
 * then the account's Supabase Auth user (when on Supabase), neither failing the answer. A request
 * the service failed gives its count back to the e-mail's limit.
 */
export function onboardingRoutes(app: App, deps: Deps): void {
  const verify = requestVerifier(deps);
  /**
   * The contract's 500, with Retry-After: the failure is the service's, so the same request may come
   * again. Logged here unless it is a database outage, which is logged once where detected.
   */
  const notCreated = (error: unknown) => {
    if (!isUnavailable(error)) deps.log("error", "onboarding_failed", { error: errorMessage(error) });
    return new Failure("account_not_created", { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
  };
  const signedWith = headerSchemes(app, SIGNED_REQUEST_SCHEMES);
  app.use(ONBOARDING_PATH, limitByIp(deps, RULES.onboardingPerIp));
  const leaseSeconds = claimLeaseSeconds(deps.databaseDeadlineMs ?? DEFAULT_DEADLINE_MS);

  /** Today's onboarding, for a request without an id: carried out each time it comes. */
  async function onboardEachTime(input: Onboarding, counted: CountedRequest): Promise<Carried> {
    try {
      const onboarded = await onboardAccount(deps, input);
      return { onboarded, answer: onboardingAnswer(onboarded.accountId) };
    } catch (error) {
      await counted.refund();
      throw notCreated(error);
    }
  }

  /** Onboarding under a claimed id: its answer stored with the key, the claim given up if nothing was carried out. */
  async function onboardOnce(input: Onboarding, counted: CountedRequest, claim: IdempotencyId, token: string): Promise<Carried> {
    let done: Awaited<ReturnType<typeof onboardAccountOnce>>;
    try {
      done = await onboardAccountOnce(deps, input, { claim, token });
    } catch (error) {
      await counted.refund();
      await release(claim, token);
      throw notCreated(error);
    }
    if (done === "lost") {
      // Another request took the id over once this one's lease ran out: it answers; this one did nothing.
      await counted.refund();
      throw new Failure("idempotency_key_in_progress", { "Retry-After": "1" });
    }
    return { onboarded: done, answer: done.answer };
  }

  /** Best effort: a claim that cannot be given up now ends with its lease. */
  const release = (claim: IdempotencyId, token: string) => releaseOnboardingKey(deps.db, claim, token).catch(() => {});

  route(
    app,
    createRoute({
      method: "post",
      path: ONBOARDING_PATH,
      operationId: "createAccount",
      summary: "Signed webhook: create the account if absent, issue a license key and e-mail it",
      tags: ["onboarding"],
      // Either scheme, never both: the security schemes say how to sign.
      security: [
        signedWith("onboardingTimestamp", "onboardingNonce", "onboardingSignature"),
        signedWith("webhookId", "webhookTimestamp", "webhookSignature"),
      ],
      request: {
        headers: z.object({
          "idempotency-key": IdempotencyKeyHeader,
        }),
        body: { ...jsonContent(OnboardingRequest, "The account to onboard"), required: true },
      },
      responses: withRateLimitHeaders({
        200: {
          ...jsonContent(OnboardingResponse, "Account ready; a new license key is on its way by e-mail. A retry of an id gets this first answer again"),
          headers: {
            [REPLAYED_HEADER]: {
              description: "`true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again",
              schema: { type: "string", const: "true" },
            },
          },
        },
        400: jsonContent(
          ErrorMessage,
          "`request body is required`, `invalid JSON body`, `email is required`, an invalid e-mail or name, or a malformed Idempotency-Key",
        ),
        401: jsonContent(SignatureError, "`invalid signature`, whatever the cause, and for a request carrying both schemes' headers"),
        408: bodyTimeout,
        409: { ...jsonContent(ErrorMessage, "`a request with this idempotency key is still in progress; retry shortly`"), headers: retryAfter },
        413: bodyTooLarge,
        422: jsonContent(ErrorMessage, "`this idempotency key was already used with a different request body`: nothing was changed"),
        429: rateLimited,
        500: { ...jsonContent(ErrorMessage, "`the account could not be created`: nothing was carried out and no e-mail's limit used; retry with the same id"), headers: retryAfter },
        503: rateLimitUnavailable,
      }),
    }),
    async (c) => {
      const body = await readBody(c.req.raw);
      const verified = await verify(c.req.raw.headers, body, deps.now());
      if (verified === undefined) throw new Failure("invalid_signature");
      if (verified.scheme === "spec") {
        // A nonce the database could not record is no replay: the platform retries with a new one.
        const fresh = await recordNonce(deps.db, verified.nonce, deps.now()).catch((error: unknown) => {
          throw notCreated(error);
        });
        if (!fresh) throw new Failure("invalid_signature");
      }
      const id = idempotencyIdOf(c.req.raw.headers, verified);
      const input = parseOnboardingRequest(parseJsonBody(body));

      let token: string | undefined;
      if (id) {
        const digest = await hexDigest("SHA-256", body);
        const claim = await claimOnboardingKey(deps.db, id, digest, deps.now(), leaseSeconds).catch((error: unknown) => {
          throw notCreated(error);
        });
        if (claim.outcome === "replay") return jsonText(claim.body, claim.status, { [REPLAYED_HEADER]: "true" });
        if (claim.outcome === "mismatch") throw new Failure("idempotency_key_reused");
        if (claim.outcome === "busy") throw new Failure("idempotency_key_in_progress", { "Retry-After": String(claim.retryAfterSeconds) });
        token = claim.token;
      }

      let counted: CountedRequest;
      try {
        counted = await countRequest(deps, RULES.onboardingPerEmail, input.email);
      } catch (error) {
        if (id && token) await release(id, token);
        throw error;
      }
      const { onboarded, answer } = id && token ? await onboardOnce(input, counted, id, token) : await onboardEachTime(input, counted);
      deps.log("info", "account_onboarded", { accountId: onboarded.accountId, key: maskKey(onboarded.key) });
      await deliverEmail(deps, onboarded.outboxId);
      await ensureAuthUser(deps, onboarded.accountId);
      return jsonText(answer, 200, counted.headers);
    },
  );
}
