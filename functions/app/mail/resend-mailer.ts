import type { Mailer } from "./mailer.ts";

export interface ResendOptions {
  apiKey: string;
  /** The sender, e.g. `Cadence <licenses@example.com>`, on a domain verified with Resend. */
  from: string;
  /** Resend's send endpoint (`https://api.resend.com/emails`); tests point it at a local stub. */
  url: string;
  /** A send that takes longer fails and is retried, well inside the outbox lease. */
  timeoutMs?: number;
}

/**
 * Sends through Resend's HTTP API (SMTP ports are closed on Supabase's edge). Any answer other
 * than 2xx throws, with the status and the start of Resend's error body, so the outbox keeps the row.
 *
 * @example
 * const mailer = resendMailer({ apiKey, from: "Cadence <licenses@example.com>", url: "https://api.resend.com/emails" });
 */
export function resendMailer(options: ResendOptions): Mailer {
  return {
    async send(message) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.apiKey}`,
        "content-type": "application/json",
      };
      if (message.idempotencyKey) headers["idempotency-key"] = message.idempotencyKey;
      const response = await fetch(options.url, {
        method: "POST",
        headers,
        body: JSON.stringify({
          from: options.from,
          to: [message.to],
          subject: message.subject,
          text: message.text,
          html: message.html,
        }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      const answer = await response.text();
      if (!response.ok) throw new Error(`resend answered ${response.status}: ${answer.slice(0, 300)}`);
    },
  };
}
