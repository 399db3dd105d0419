import { createRoute, z } from "@hono/zod-openapi";
import { ensureAuthUser } from "../auth-users/link-auth-user.ts";
import { DEFAULT_DEADLINE_MS } from "../db/database.ts";
import type { Deps } from "../deps.ts";
import { Failure, type FailureCode, failures } from "../errors.ts";
import { ErrorMessage } from "../http/error-message.ts";
import { hexDigest } from "../hex.ts";
import { parseJsonBody, readBody } from "../http/body.ts";
import { jsonText } from "../http/json.ts";
import { headerSchemes } from "../http/openapi-security.ts";
import { bodyTimeout, bodyTooLarge, rateLimited, rateLimitUnavailable, withRateLimitHeaders } from "../http/openapi-responses.ts";
import { type App, jsonContent, route } from "../http/route.ts";
import { deliverEmail } from "../mail/outbox.ts";
import { claimLeaseSeconds, IdempotencyKeyHeader, idempotencyIdOf, REPLAYED_HEADER } from "../onboarding/idempotency.ts";
import { SignatureError } from "../onboarding/schemas.ts";
import { claimOnboardingKey, type IdempotencyId, recordNonce, releaseOnboardingKey } from "../onboarding/store.ts";
import { type CountedRequest, countRequest } from "../rate-limit/enforce-limit.ts";
import { limitByIp } from "../rate-limit/middleware.ts";
import { RULES } from "../rate-limit/rules.ts";
import { SIGNED_REQUEST_SCHEMES } from "../signatures/signed-request-schemes.ts";
import { requestVerifier } from "../signatures/verify-request.ts";
import { answersOf, answerTemplate, LIFECYCLE_CALLS, type LifecycleCall, renderAnswer } from "./calls.ts";
import { LifecycleResponse, requireCallType } from "./schemas.ts";
import { type ChangeRow, lifecycleChange, lifecycleChangeOnce } from "./store.ts";

const retryAfter = { "Retry-After": { $ref: "#/components/headers/Retry-After" } };

/** A resend renders its e-mail again when the account's e-mail changed under it; more would mean it keeps changing. */
const RENDERS = 3;

/** What an id's digest covers: the path, a newline, the raw body. */
function pathAndBody(path: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const head = new TextEncoder().encode(`${path}\n`);
  const bytes = new Uint8Array(head.byteLength + body.byteLength);
  bytes.set(head);
  bytes.set(body, head.byteLength);
  return bytes;
}

/** The description of a call's refusals, from errors.ts: the document says what the API answers. */
function quoted(codes: readonly FailureCode[]): string {
  return codes.map((code) => `\`${(failures[code][1] as { message: string }).message}\``).join(", ");
}

/**
 * The signed lifecycle calls (LIFECYCLE_CALLS), each as onboarding is signed and retried
 * (onboarding/routes.ts): the per-IP limit first (one bucket for every lifecycle call); the body read
 * under the 64 KiB limit; the signature over those raw bytes under exactly one scheme, the contract's
 * over this call's own path; then its nonce; then the body's `type`, which must name this call
 * (the Standard Webhooks signature covers the body, not the path), and its fields. A request with an id
 * (Idempotency-Key, or webhook-id) claims it in the namespace onboarding uses, its digest over the
 * path and the body, so an id signed for one call (Standard Webhooks does not sign the path) is a
 * 422 at another; a retry gets the first answer, refusals included. Then the call's own limit, and
 * the change: one SQL function in one transaction, with the id's answer when there is one. A queued
 * e-mail is delivered after the commit. Nothing answers 500: a database outage is the app's 503.
 */
export function lifecycleRoutes(app: App, deps: Deps): void {
  const signedWith = headerSchemes(app, SIGNED_REQUEST_SCHEMES);
  const leaseSeconds = claimLeaseSeconds(deps.databaseDeadlineMs ?? DEFAULT_DEADLINE_MS);
  for (const call of LIFECYCLE_CALLS) lifecycleRoute(app, deps, call as LifecycleCall<unknown>, { signedWith, leaseSeconds });
}

function lifecycleRoute(
  app: App,
  deps: Deps,
  call: LifecycleCall<unknown>,
  shared: { signedWith: ReturnType<typeof headerSchemes<keyof typeof SIGNED_REQUEST_SCHEMES>>; leaseSeconds: number },
): void {
  const verify = requestVerifier(deps, call.path);
  const template = answerTemplate(call);
  const answers = answersOf(call);
  app.use(call.path, limitByIp(deps, RULES.lifecyclePerIp));

  /** Best effort: a claim that cannot be given up now ends with its lease. */
  const release = (claim: IdempotencyId, token: string) => releaseOnboardingKey(deps.db, claim, token).catch(() => {});

  /** The change, rendered again while the resend's recipient moves under it; the answer's status and bytes. */
  async function carryOut(input: unknown, once?: { claim: IdempotencyId; token: string }): Promise<{ row: ChangeRow; status: number; answer: string }> {
    for (let render = 0; render < RENDERS; render++) {
      const args = await call.args(deps.db, input);
      if (once) {
        const row = await lifecycleChangeOnce(deps.db, { ...once, call: call.name, args, nowMs: deps.now(), answers });
        if (row.outcome === "lost") throw new Failure("idempotency_key_in_progress", { "Retry-After": "1" });
        if (row.response_status !== null && row.response_body !== null) return { row, status: row.response_status, answer: row.response_body };
      } else {
        const row = await lifecycleChange(deps.db, call.name, args, deps.now());
        if (row.outcome === "done") return { row, status: 200, answer: renderAnswer(template, row.changed, row.account_id) };
        if (call.refusals.includes(row.outcome as FailureCode)) throw new Failure(row.outcome as FailureCode);
      }
    }
    // The account's e-mail changed under every render: nothing was queued; the platform retries.
    throw new Failure("service_unavailable", { "Retry-After": "1" });
  }

  const refusals = (status: number) => call.refusals.filter((code) => failures[code][0] === status);
  const documented = (status: number, extra: string) => {
    const codes = refusals(status);
    return codes.length === 0 ? [] : [[status, jsonContent(ErrorMessage, `${quoted(codes)}${extra}`)] as const];
  };

  route(
    app,
    createRoute({
      method: "post",
      path: call.path,
      operationId: call.operationId,
      summary: call.summary,
      description: call.description,
      tags: ["lifecycle"],
      security: [
        shared.signedWith("onboardingTimestamp", "onboardingNonce", "onboardingSignature"),
        shared.signedWith("webhookId", "webhookTimestamp", "webhookSignature"),
      ],
      request: {
        headers: z.object({ "idempotency-key": IdempotencyKeyHeader }),
        body: { ...jsonContent(call.request, "What to change"), required: true },
      },
      responses: withRateLimitHeaders({
        200: {
          ...jsonContent(LifecycleResponse, `Done (\`changed\` false when it was already so). A retry of an id gets the first answer again`),
          headers: {
            [REPLAYED_HEADER]: {
              description: "`true` on an answer replayed to a retry of an Idempotency-Key or webhook-id: nothing was carried out again",
              schema: { type: "string", const: "true" },
            },
          },
        },
        400: jsonContent(ErrorMessage, "`request body is required`, `invalid JSON body`, `type is required`, `type must name the call of this path`, a field missing or invalid (its name in the message), or a malformed Idempotency-Key"),
        401: jsonContent(SignatureError, "`invalid signature`, whatever the cause, and for a request carrying both schemes' headers"),
        ...Object.fromEntries(documented(404, ": nothing was changed")),
        408: bodyTimeout,
        409: {
          ...jsonContent(ErrorMessage, [`${quoted(refusals(409))}${refusals(409).length ? ": nothing was changed; or " : ""}`, "`a request with this idempotency key is still in progress; retry shortly`, with Retry-After"].join("")),
          headers: retryAfter,
        },
        413: bodyTooLarge,
        422: jsonContent(ErrorMessage, "`this idempotency key was already used with a different request body` (or at another call): nothing was changed"),
        429: rateLimited,
        503: rateLimitUnavailable,
      }),
    }),
    async (c) => {
      const body = await readBody(c.req.raw);
      const verified = await verify(c.req.raw.headers, body, deps.now());
      if (verified === undefined) throw new Failure("invalid_signature");
      if (verified.scheme === "spec" && !(await recordNonce(deps.db, verified.nonce, deps.now()))) throw new Failure("invalid_signature");
      const id = idempotencyIdOf(c.req.raw.headers, verified);
      const parsed = parseJsonBody(body);
      requireCallType(parsed, call.name);
      const input = call.parse(parsed);

      let token: string | undefined;
      if (id) {
        // The path with the body: one id namespace for every signed call, never carried out at two.
        const digest = await hexDigest("SHA-256", pathAndBody(call.path, body));
        const claim = await claimOnboardingKey(deps.db, id, digest, deps.now(), shared.leaseSeconds);
        if (claim.outcome === "replay") return jsonText(claim.body, claim.status, { [REPLAYED_HEADER]: "true" });
        if (claim.outcome === "mismatch") throw new Failure("idempotency_key_reused");
        if (claim.outcome === "busy") throw new Failure("idempotency_key_in_progress", { "Retry-After": String(claim.retryAfterSeconds) });
        token = claim.token;
      }

      let counted: CountedRequest | undefined;
      let done: Awaited<ReturnType<typeof carryOut>>;
      try {
        if (call.perInput) counted = await countRequest(deps, call.perInput.rule, call.perInput.identifier(input));
        done = await carryOut(input, id && token ? { claim: id, token } : undefined);
      } catch (error) {
        // Nothing was carried out: the id is free for a retry, and the request is given back to the
        // call's own limit unless the caller's request was refused.
        if (id && token && !(error instanceof Failure && error.code === "idempotency_key_in_progress")) await release(id, token);
        if (!(error instanceof Failure) || error.code === "idempotency_key_in_progress") await counted?.refund();
        throw error;
      }
      if (done.status === 200) {
        deps.log("info", "license_lifecycle", { call: call.name, changed: done.row.changed, ...call.logged(input) });
        if (done.row.outbox_id) await deliverEmail(deps, done.row.outbox_id);
        if (call.authUserFollows && done.row.changed && done.row.account_id) await ensureAuthUser(deps, done.row.account_id);
      }
      return jsonText(done.answer, done.status, counted?.headers ?? {});
    },
  );
}
