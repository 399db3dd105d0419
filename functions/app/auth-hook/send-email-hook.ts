import { Failure, failures } from "../errors.ts";
import { readBody } from "../http/body.ts";
import type { EmailMessage } from "../mail/mailer.ts";
import { deliverEmail, type OutboxPorts } from "../mail/outbox.ts";
import { hookEmails } from "./hook-emails.ts";
import { parseSendEmailPayload, PayloadError, type SendEmailPayload } from "./payload.ts";
import { enqueueHookEmails } from "./store.ts";
import { hexDigest } from "../hex.ts";
import { errorMessage } from "../log.ts";
import { standardWebhook } from "../signatures/standard-webhooks.ts";

export interface SendEmailHookOptions {
  /** `SEND_EMAIL_HOOK_SECRET`, as the dashboard shows it: `v1,whsec_<base64>`. Never logged. */
  secret: string;
  /**
   * How long the answer waits for delivery. Auth gives a hook 5 s in all, its retries included;
   * an e-mail still sending then is queued already: it goes out, or the outbox pass sends it
   * once its lease ends.
   */
  deliveryBudgetMs?: number;
}

/** An error as Auth reads it from a hook: `{ error: { http_code, message } }`. */
function hookError(status: number, message: string): Response {
  return Response.json({ error: { http_code: status, message } }, { status });
}

/** Waits for `work`, or for `ms`, whichever ends first. */
async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The payload and its e-mails, or the 400 that refuses the body. */
function render(text: string): { payload: SendEmailPayload; messages: EmailMessage[] } | Response {
  try {
    const payload = parseSendEmailPayload(JSON.parse(text));
    return { payload, messages: hookEmails(payload) };
  } catch (error) {
    if (error instanceof SyntaxError) return hookError(400, "invalid JSON body");
    if (error instanceof PayloadError) return hookError(400, error.message);
    throw error;
  }
}

/**
 * Supabase Auth's Send Email Hook. In order: the body under the 64 KiB limit; the Standard
 * Webhooks signature over its exact text (401 for a missing, wrong or expired one); the payload
 * (400 naming the unknown action type or the bad field); Cadence's templates; the e-mails queued
 * in the outbox in one statement, keyed by the body's digest so that Auth's retry of a call
 * (a new webhook-id, the same body) queues nothing twice; delivery through the mailer, up to the
 * budget; then 200 `{}`, which is all Auth expects.
 *
 * @example
 * Deno.serve(sendEmailHook(outbox.ports, { secret: config.SEND_EMAIL_HOOK_SECRET }));
 */
export function sendEmailHook(ports: OutboxPorts, options: SendEmailHookOptions): (request: Request) => Promise<Response> {
  const webhook = standardWebhook(options.secret);
  const deliveryBudgetMs = options.deliveryBudgetMs ?? 2_000;
  return async function handleSendEmailHook(request) {
    if (request.method !== "POST") return hookError(405, "use POST");
    let body: Uint8Array<ArrayBuffer>;
    try {
      body = await readBody(request);
    } catch (error) {
      if (!(error instanceof Failure)) throw error;
      const [status, answer] = failures[error.code];
      return hookError(status, "message" in answer ? answer.message : answer.error);
    }
    const text = new TextDecoder().decode(body);

    const verdict = webhook.verify(text, request.headers, ports.now());
    if (!verdict.valid) {
      ports.log("warn", "auth_email_hook_refused", { reason: verdict.reason });
      return hookError(401, "invalid signature");
    }

    const rendered = render(text);
    if (rendered instanceof Response) return rendered;
    const { payload, messages } = rendered;
    const action = payload.email_data.email_action_type;

    let outboxIds: string[];
    try {
      outboxIds = await enqueueHookEmails(ports.db, {
        event: `auth-email-hook:${await hexDigest("SHA-256", body)}`,
        messages,
        nowMs: ports.now(),
      });
    } catch (error) {
      ports.log("error", "auth_email_not_queued", { action, error: errorMessage(error) });
      return hookError(500, "the e-mail could not be queued");
    }
    if (outboxIds.length === 0) {
      ports.log("info", "auth_email_repeated", { userId: payload.user.id, action });
      return Response.json({});
    }
    ports.log("info", "auth_email_queued", { userId: payload.user.id, action, outboxIds });
    await settleWithin(Promise.all(outboxIds.map((id) => deliverEmail(ports, id))), deliveryBudgetMs);
    return Response.json({});
  };
}
